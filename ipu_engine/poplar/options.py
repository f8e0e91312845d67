"""Engine options with Poplar's keys, from ``options=`` and ``POPLAR_ENGINE_OPTIONS``.

Keys passed to ``Engine(..., options=...)`` win over the environment variable. The keys and
what each does are the table in ``option_keys``. A key accepted without effect logs one
line saying so; an unknown key or a bad value is an error naming the key, the value and
what is allowed (for an unknown key, the closest known keys).
"""

from __future__ import annotations

import difflib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ipu_engine.common.errors import OptionError
from ipu_engine.poplar.option_keys import ENGINE_OPTION_KEYS
from ipu_engine.poplar.option_values import scalar

log = logging.getLogger("poplar")

ENV_VAR = "POPLAR_ENGINE_OPTIONS"
#: the folder of the executable cache (framework programs: PopTorch's POPTORCH_CACHE_DIR)
CACHE_OPTION = "executableCache.directory"


@dataclass(frozen=True)
class EngineOptions:
    """Parsed engine options; ``values`` holds every known key with its typed value."""

    values: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def report_directory(self) -> str:
        return self.values["autoReport.directory"]

    def output(self, what: str) -> bool:
        """Whether autoReport writes ``what`` (GraphProfile, ExecutionProfile, DebugInfo,
        SerializedGraph)."""
        explicit = self.values[f"autoReport.output{what}"]
        return bool(self.values["autoReport.all"]) if explicit is None else explicit

    @property
    def wants_report(self) -> bool:
        kinds = ("GraphProfile", "ExecutionProfile", "DebugInfo", "SerializedGraph")
        return any(self.output(w) for w in kinds)

    @property
    def instrument(self) -> bool:
        return bool(self.values["debug.instrument"]) or self.output("ExecutionProfile")


def parse_options(
    given: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> EngineOptions:
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = {}
    raw_env = environ.get(ENV_VAR, "").strip()
    if raw_env:
        try:
            from_env = json.loads(raw_env)
        except json.JSONDecodeError as exc:
            raise OptionError(
                f"{ENV_VAR} is not valid JSON ({exc.msg} at character {exc.pos})"
            ) from None
        except RecursionError:
            raise OptionError(f"{ENV_VAR} is nested too deeply to be engine options") from None
        if not isinstance(from_env, dict):
            raise OptionError(f"{ENV_VAR} must be a JSON object of option keys and values")
        merged.update(_checked(from_env, f"{ENV_VAR}"))
    if given is not None:
        if not isinstance(given, Mapping):
            raise OptionError(
                f"options must be a dict of option keys and values, got a {type(given).__name__}"
            )
        merged.update(_checked(given, "options"))
    values = {key: spec.default for key, spec in ENGINE_OPTION_KEYS.items()}
    for key, raw in merged.items():
        scalar(key, raw)
        spec = ENGINE_OPTION_KEYS[key]
        values[key] = spec.parse(key, raw)
        if not spec.honoured:
            log.warning(
                "PO: engine option %s=%r is accepted but has no effect in ipu_engine: %s",
                key,
                raw,
                spec.effect,
            )
    return EngineOptions(values)


def _checked(options: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    for key in options:
        if not isinstance(key, str):
            raise OptionError(
                f"engine option keys are strings, got {type(key).__name__} in {source}"
            )
        if key not in ENGINE_OPTION_KEYS:
            raise OptionError(f"unknown engine option {key!r} in {source}; {_closest(key)}")
    return options


def _closest(key: str) -> str:
    near = difflib.get_close_matches(key, ENGINE_OPTION_KEYS, n=3, cutoff=0.6)
    if not near:
        # A family's keys share a prefix: "profiler.fromat" is still near "profiler.*".
        family = key.split(".", 1)[0] + "."
        near = [k for k in ENGINE_OPTION_KEYS if k.startswith(family)][:3]
    if not near:
        families = sorted({k.split(".", 1)[0] for k in ENGINE_OPTION_KEYS})
        return f"known keys start with {', '.join(f + '.' for f in families)} (see the README)"
    quoted = [repr(k) for k in near]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"did you mean {listed}?"
