"""Engine options with Poplar's keys, from ``options=`` and ``POPLAR_ENGINE_OPTIONS``.

Keys passed to ``Engine(..., options=...)`` win over the environment variable. Unknown
keys and bad values are errors that name the key, the value and what is allowed.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ipu_engine.errors import OptionError

ENV_VAR = "POPLAR_ENGINE_OPTIONS"
CACHE_OPTION = "executableCache.directory"


def _scalar(key: str, value: Any) -> None:
    """Every option value is one string, number or boolean: never a list or a dict (whose
    text could be nested a million levels deep)."""
    if not isinstance(value, str | bool | int | float):
        raise OptionError(
            f"engine option {key!r}: the value must be a string, number or boolean, "
            f"got a {type(value).__name__}"
        )


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise OptionError(f'engine option {key!r}: {value!r} is not a boolean; use "true" or "false"')


def _count(key: str, value: Any) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0:
        raise OptionError(f"engine option {key!r}: {value!r} is not a count (an integer >= 0)")
    return number


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise OptionError(f"engine option {key!r}: {value!r} must be a non-empty string")
    return value


def _path(key: str, value: Any) -> str:
    text = _text(key, value)
    if "\0" in text:
        raise OptionError(f"engine option {key!r}: {value!r} is not a path (it holds a NUL)")
    return text


def _choice(*choices: str) -> Callable[[str, Any], str]:
    def parse(key: str, value: Any) -> str:
        if str(value) not in choices:
            raise OptionError(
                f"engine option {key!r}: {value!r} is not one of {', '.join(choices)}"
            )
        return str(value)

    return parse


# key -> (parser, default)
_KNOWN: dict[str, tuple[Callable[[str, Any], Any], Any]] = {
    "autoReport.all": (_bool, False),
    "autoReport.directory": (_path, "."),
    "autoReport.outputGraphProfile": (_bool, None),
    "autoReport.outputExecutionProfile": (_bool, None),
    "autoReport.outputDebugInfo": (_bool, None),
    "autoReport.outputLoweredVars": (_bool, None),
    "autoReport.outputArchive": (_bool, None),
    "autoReport.executionProfileProgramRunCount": (_count, 2),
    "autoReport.streamAtEachRun": (_bool, True),
    "debug.allowOutOfMemory": (_bool, False),
    "debug.instrument": (_bool, False),
    "debug.instrumentCompute": (_bool, None),
    "debug.instrumentExternalExchange": (_bool, None),
    "debug.instrumentControlFlow": (_bool, None),
    "debug.computeInstrumentationLevel": (_choice("tile", "vertex", "device", "ipu"), "tile"),
    "debug.outputAllSymbols": (_bool, False),
    "target.deterministicWorkers": (_bool, True),
    # a folder of compiled executables, reused while the program is unchanged
    CACHE_OPTION: (_path, None),
}


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
        """Whether autoReport writes ``what`` (GraphProfile, ExecutionProfile, DebugInfo)."""
        explicit = self.values[f"autoReport.output{what}"]
        return bool(self.values["autoReport.all"]) if explicit is None else explicit

    @property
    def wants_report(self) -> bool:
        return any(self.output(w) for w in ("GraphProfile", "ExecutionProfile", "DebugInfo"))

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
    values = {key: default for key, (_, default) in _KNOWN.items()}
    for key, raw in merged.items():
        _scalar(key, raw)
        parser, _ = _KNOWN[key]
        values[key] = parser(key, raw)
    return EngineOptions(values)


def _checked(options: Mapping[str, Any], source: str) -> Mapping[str, Any]:
    for key in options:
        if not isinstance(key, str):
            raise OptionError(
                f"engine option keys are strings, got {type(key).__name__} in {source}"
            )
        if key not in _KNOWN:
            near = difflib.get_close_matches(str(key), _KNOWN, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise OptionError(f"unknown engine option {key!r} in {source}{hint}")
    return options
