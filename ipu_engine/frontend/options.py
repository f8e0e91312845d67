"""Options of a framework-level program, in PopTorch's spirit: the target, how many times it
runs on the device per call, replication, gradient accumulation, and engine options.

How a host batch is cut: its first axis holds ``device_iterations`` x
``gradient_accumulation`` x ``replication_factor`` micro-batches, in that order (the
iteration slowest, the replica fastest), each fed to its replica through an infeed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ipu_engine.common.errors import OptionError
from ipu_engine.frontend.available_memory import check_model_proportion
from ipu_engine.poplar.options import CACHE_OPTION
from ipu_engine.poplar.target import Device, IPUModel

CACHE_ENV_VAR = "POPTORCH_CACHE_DIR"


@dataclass(frozen=True)
class Options:
    """What ``compile``, ``function``, ``pipeline`` and the model wrappers run with."""

    ipu_version: str = "ipu2"
    num_ipus: int | None = None  # default: replication_factor x the IPUs the program uses
    tiles_per_ipu: int | None = None  # fewer tiles than the real IPU, for quick experiments
    device_iterations: int = 1  # on-device loop (pipelines: micro-batches) per call
    replication_factor: int = 1
    gradient_accumulation: int = 1  # micro-batches per weight update (training)
    engine_options: Mapping[str, Any] | None = None  # Poplar engine options, e.g. autoReport
    name: str | None = None  # the engine program's name (its report folder)
    execution_strategy: str = "pipelined"  # what nn.begin_block blocks are: or "sharded"
    partials_type: str = "float"  # what half matmul products accumulate in: or "half"
    # a folder of compiled executables reused while the program is unchanged (PopTorch's
    # enableExecutableCaching, TF's executable_cache_path); default: $POPTORCH_CACHE_DIR
    executable_cache_path: str | None = None
    # the share of tile memory matmul plans may use for temporaries: one for every IPU, or
    # {"IPU0": 0.3, ...} per IPU of a replica (PopTorch's setAvailableMemoryProportion);
    # None keeps poplin's 0.6. ops.set_available_memory overrides it per op.
    available_memory_proportion: float | Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        for key in ("device_iterations", "replication_factor", "gradient_accumulation"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OptionError(f"option {key!r} must be an integer >= 1, got {value!r}")
        if self.execution_strategy not in ("pipelined", "sharded"):
            raise OptionError(
                f"option 'execution_strategy' must be 'pipelined' or 'sharded', got "
                f"{self.execution_strategy!r}"
            )
        if self.partials_type not in ("float", "half"):
            raise OptionError(
                f"option 'partials_type' must be 'float' or 'half' (what half matmul products "
                f"accumulate in, Poplar's partialsType), got {self.partials_type!r}"
            )
        path = self.executable_cache_path
        if path is not None and (not isinstance(path, str) or not path or "\0" in path):
            raise OptionError(f"option 'executable_cache_path' must be a folder path, got {path!r}")
        check_model_proportion(self.available_memory_proportion)
        if self.num_ipus is not None and (not isinstance(self.num_ipus, int) or self.num_ipus < 1):
            raise OptionError(f"option 'num_ipus' must be an integer >= 1, got {self.num_ipus!r}")
        if self.num_ipus is not None and self.num_ipus % self.replication_factor:
            raise OptionError(
                f"num_ipus={self.num_ipus} cannot be shared by replication_factor="
                f"{self.replication_factor} replicas: use a multiple of it"
            )

    def enable_executable_caching(self, path: str) -> Options:
        """These options with compiled executables cached in ``path`` (PopTorch's
        ``options.enableExecutableCaching(path)``)."""
        return dataclasses.replace(self, executable_cache_path=path)

    def engine_options_with_cache(self, environ: Mapping[str, str] | None = None) -> dict:
        """The engine options the Engine gets: ``engine_options`` plus the cache folder
        (``executable_cache_path``, else ``POPTORCH_CACHE_DIR``) unless they name one."""
        options = dict(self.engine_options or {})
        environ = os.environ if environ is None else environ
        folder = self.executable_cache_path or environ.get(CACHE_ENV_VAR, "").strip() or None
        if folder is not None:
            options.setdefault(CACHE_OPTION, folder)
        return options

    @property
    def ipus_per_replica(self) -> int | None:
        return None if self.num_ipus is None else self.num_ipus // self.replication_factor

    def with_overrides(self, overrides: Mapping[str, Any]) -> Options:
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise OptionError(f"unknown option {unknown[0]!r}; known options: {sorted(known)}")
        return dataclasses.replace(self, **overrides) if overrides else self

    def framework_info(self, kind: str, ipus_per_replica: int, stages: int) -> dict[str, str]:
        """What the engine's report says ran on it (Graph Analyser's framework block)."""
        info = {
            "Framework": "ipu_engine.frontend",
            "Model": kind,
            "Replicas": str(self.replication_factor),
            "IPUs per replica": str(ipus_per_replica),
            "Pipeline stages": str(stages) if stages else "not pipelined",
            "Device iterations": str(self.device_iterations),
        }
        if kind == "training":
            info["Gradient accumulation"] = str(self.gradient_accumulation)
        return info

    def target_text(self) -> str:
        ipus = self.ipus_per_replica
        if ipus is None:
            return self.ipu_version
        if self.replication_factor > 1:
            return f"each of the {self.replication_factor} replicas on {self.ipu_version}"
        return self.ipu_version

    def device(self, ipus_per_replica: int) -> Device:
        """The IPU Model device: ``replication_factor`` x ``ipus_per_replica`` IPUs."""
        num_ipus = self.num_ipus or ipus_per_replica * self.replication_factor
        return IPUModel(self.ipu_version, num_ipus, self.tiles_per_ipu).create_device()


def resolve(options: Options | None, overrides: Mapping[str, Any]) -> Options:
    if options is not None and not isinstance(options, Options):
        raise OptionError(f"options must be an ipu_engine.Options, got {type(options).__name__}")
    return (options or Options()).with_overrides(overrides)
