"""``poptorch.Options``: PopTorch's option object, by PopTorch's method names, for the
options an inference model on the embedded engine honours; every other PopTorch option is
a clear "not supported yet" naming it, never silently ignored."""

from __future__ import annotations

import difflib
import enum
import math
import os
from collections.abc import Mapping
from typing import Any

import torch

from ipu_engine.common.errors import OptionError

__all__ = [
    "HalfFloatCastingBehavior",
    "Options",
    "OutputMode",
    "PipelinedExecution",
    "ShardedExecution",
]


class OutputMode(enum.IntEnum):
    """What a call returns of its device iterations' outputs (PopTorch's ``OutputMode``)."""

    Final = 0  # the last micro-batch (of each replica)
    EveryN = 1  # every N-th micro-batch
    All = 2  # every micro-batch, joined along the first axis (inference's default)
    Sum = 3  # the micro-batches' sum
    Default = 4  # All for inference


class HalfFloatCastingBehavior(enum.IntEnum):
    """Kept for PopTorch scripts that set it: half op float is float, as in PyTorch."""

    FloatDowncastToHalf = 0
    HalfUpcastToFloat = 1
    Default = 2


class PipelinedExecution:
    """Each block's ``ipu_id`` is its pipeline stage (PopTorch's ``AutoStage.SameAsIpu``):
    micro-batches overlap across the IPUs (the default strategy)."""

    mode = "pipelined"

    def __init__(self, *args: Any) -> None:
        if args:
            raise OptionError(
                f"{type(self).__name__}({', '.join(map(repr, args))}): explicit stages and "
                "AutoStage are not supported yet by ipu_engine.poptorch; each block's ipu_id "
                "is its stage (AutoStage.SameAsIpu)"
            )


class ShardedExecution(PipelinedExecution):
    """Each block runs on its ``ipu_id``, one after the other (no pipelining)."""

    mode = "sharded"


def _not_supported(name: str, why: str = "") -> OptionError:
    return OptionError(
        f"poptorch.Options: {name} is not supported yet by ipu_engine.poptorch"
        + (f": {why}" if why else "")
    )


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"poptorch.Options.{name}({value!r}): needs a whole number >= 1")
    return value


def _proportion(value: Any, what: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 < value <= 1:
        raise OptionError(f"{what}: {value!r} must be a proportion in (0, 1]")
    return float(value)


class _Unsupported:
    """A category of PopTorch options the shim does not have: each method names itself."""

    _category = ""
    _why = ""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def refuse(*args: Any, **kwargs: Any) -> None:
            raise _not_supported(f"{self._category}.{name}", self._why)

        return refuse


class _TrainingOptions(_Unsupported):
    _category = "Training"
    _why = "ipu_engine.poptorch runs inference models only (poptorch.inferenceModel)"


class _PrecisionOptions:
    """``opts.Precision``: the partials type of matmuls and convolutions."""

    def __init__(self) -> None:
        self.partials_type = "float"

    def setPartialsType(self, dtype: torch.dtype) -> _PrecisionOptions:
        """What half matmul and convolution products accumulate in: torch.float (default)
        or torch.half (PopLibs' ``partialsType``)."""
        kinds = {torch.float32: "float", torch.float16: "half"}
        if dtype not in kinds:
            raise OptionError(
                f"poptorch.Options.Precision.setPartialsType({dtype!r}): needs torch.float "
                "or torch.half"
            )
        self.partials_type = kinds[dtype]
        return self

    def halfFloatCasting(self, behaviour: HalfFloatCastingBehavior) -> _PrecisionOptions:
        """Deprecated in PopTorch: half op float is float, as in PyTorch; nothing to set."""
        return self

    def runningStatisticsAlwaysFloat(self, value: bool) -> _PrecisionOptions:
        """Deprecated in PopTorch: running statistics keep the model's type."""
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise _not_supported(
            f"Precision.{name}", "the engine rounds half to nearest, with no exceptions"
        )


#: PopTorch option methods the shim knows and refuses, with why.
_REFUSED = {
    "anchorTensor": "outputs are the model's outputs",
    "connectionType": "the embedded engine is always attached",
    "enableSyntheticData": "inputs always come from the host",
    "enableStableNorm": "",
    "inputReplicaGrouping": "",
    "loadFromFile": "set the options in Python",
    "syncPattern": "",
    "updatableNamedBuffers": "",
    "useIpuId": "the embedded engine has no physical IPUs",
    "useOfflineIpuTarget": "the embedded engine is always attached",
    "TensorLocations": "tensors stay on the IPU",
    "Distributed": "",
    "Jit": "models are exported with torch.export",
}


class Options:
    """PopTorch's ``poptorch.Options`` for ``inferenceModel``: ``deviceIterations``,
    ``replicationFactor``, ``outputMode``, ``setAvailableMemoryProportion``,
    ``Precision.setPartialsType``, ``enableExecutableCaching`` (or ``POPTORCH_CACHE_DIR``),
    ``modelName``, ``enableProfiling``, ``setExecutionStrategy``; ``Training`` and the
    other PopTorch options say they are not supported yet."""

    def __init__(self) -> None:
        self.device_iterations = 1
        self.replication_factor = 1
        self.output_mode = OutputMode.Default
        self.output_return_period = 1
        self.available_memory_proportion: dict[str, float] = {}
        self.executable_cache_path: str | None = os.environ.get("POPTORCH_CACHE_DIR") or None
        self.model_name: str | None = None
        self.engine_options: dict[str, str] = {}
        self.execution_strategy: PipelinedExecution = PipelinedExecution()
        self.random_seed: int | None = None
        self._precision = _PrecisionOptions()
        self._training = _TrainingOptions()

    @property
    def Precision(self) -> _PrecisionOptions:
        return self._precision

    @property
    def Training(self) -> _TrainingOptions:
        return self._training

    def deviceIterations(self, device_iterations: int) -> Options:
        """Micro-batches the device runs per call, in an on-device loop: the inputs' first
        dimension is this x replicationFactor x the model's batch."""
        self.device_iterations = _count(device_iterations, "deviceIterations")
        return self

    def replicationFactor(self, replication_factor: int) -> Options:
        """Copies of the model, each on its own IPUs with its share of every call's batch."""
        self.replication_factor = _count(replication_factor, "replicationFactor")
        return self

    def outputMode(
        self, output_mode: OutputMode, output_return_period: int | None = None
    ) -> Options:
        """What a call returns: ``All`` (default) every micro-batch, ``Final`` the last,
        ``Sum`` their sum, ``EveryN`` every ``output_return_period``-th."""
        if not isinstance(output_mode, OutputMode):
            raise OptionError(
                f"poptorch.Options.outputMode({output_mode!r}): needs a poptorch.OutputMode"
            )
        if output_mode == OutputMode.EveryN:
            self.output_return_period = _count(output_return_period, "outputMode(EveryN, N)")
        self.output_mode = output_mode
        return self

    def setAvailableMemoryProportion(self, available_memory_proportion: Mapping) -> Options:
        """Temporary memory per IPU for matmuls and convolutions: ``{"IPU0": 0.3}``."""
        if not isinstance(available_memory_proportion, Mapping):
            raise OptionError(
                "poptorch.Options.setAvailableMemoryProportion: needs a dict such as "
                f'{{"IPU0": 0.5}}, got {available_memory_proportion!r}'
            )
        found = {}
        for key, value in available_memory_proportion.items():
            if not (isinstance(key, str) and key.startswith("IPU") and key[3:].isdigit()):
                raise OptionError(
                    f"poptorch.Options.setAvailableMemoryProportion: key {key!r} must name an "
                    'IPU as "IPU0", "IPU1", ...'
                )
            found[key] = _proportion(value, f"setAvailableMemoryProportion[{key!r}]")
        self.available_memory_proportion.update(found)
        return self

    def enableExecutableCaching(self, path: str | None) -> Options:
        """Store compiled executables in ``path`` and load them instead of compiling."""
        if path is not None and not isinstance(path, str | os.PathLike):
            raise OptionError(f"poptorch.Options.enableExecutableCaching({path!r}): needs a path")
        self.executable_cache_path = None if path is None else os.fspath(path)
        return self

    def modelName(self, name: str) -> Options:
        """The report folder's name (default ``inference``)."""
        if not isinstance(name, str) or not name:
            raise OptionError(f"poptorch.Options.modelName({name!r}): needs a name")
        self.model_name = name
        return self

    def enableProfiling(self, profile_dir: str | None = None) -> Options:
        """autoReport into ``profile_dir`` (default the current folder);
        ``POPLAR_ENGINE_OPTIONS`` wins where it says otherwise, as in PopTorch."""
        self.engine_options.update(
            {"autoReport.all": "true", "autoReport.directory": os.fspath(profile_dir or ".")}
        )
        return self

    def setExecutionStrategy(self, strategy: PipelinedExecution) -> Options:
        """``PipelinedExecution()`` (default) or ``ShardedExecution()``."""
        if not isinstance(strategy, PipelinedExecution):
            raise _not_supported(
                f"setExecutionStrategy({type(strategy).__name__})",
                "only PipelinedExecution and ShardedExecution are",
            )
        self.execution_strategy = strategy
        return self

    def randomSeed(self, random_seed: int) -> Options:
        """Kept for scripts that set it: inference here draws no random numbers."""
        self.random_seed = random_seed
        return self

    def useIpuModel(self, use_model: bool) -> Options:
        """Always the IPU Model here: accepted either way."""
        return self

    def autoRoundNumIPUs(self, auto_round_num_ipus: bool = True) -> Options:
        """Accepted: the embedded engine has any count of IPUs."""
        return self

    def showCompilationProgressBar(self, show: bool = True) -> Options:
        return self

    def logDir(self, log_dir: str) -> Options:
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _REFUSED:
            raise _not_supported(name, _REFUSED[name])
        close = difflib.get_close_matches(name, [*dir(type(self)), *_REFUSED], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise AttributeError(f"poptorch.Options has no option {name!r}{hint}")
