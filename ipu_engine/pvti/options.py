"""Parse libpvti's PVTI_OPTIONS, e.g. ``{"enable":"true","directory":"traces"}``, strictly.

Unlike libpvti (which falls back to defaults), a malformed value is an error naming the
key, so a typo never silently loses a trace.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ipu_engine.pvti.errors import PvtiOptionsError

ENV_VAR = "PVTI_OPTIONS"
KNOWN_KEYS = ("enable", "directory", "channels", "duration")
#: Longest recording a duration may ask for: a year (a longer wait overflows the timer's
#: clock, and its thread would die with the recording never stopped).
MAX_DURATION_S = 365 * 24 * 3600.0


@dataclass(frozen=True)
class PvtiOptions:
    enable: bool = True  # libpvti: true when the variable is set without "enable"
    directory: Path = Path(".")
    channels: tuple[str, ...] | None = None  # None: every channel
    duration_s: float = 0.0  # stop recording after this many seconds; 0 = never


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise PvtiOptionsError(f'{ENV_VAR}: "{key}" must be true or false, not {value!r}')


def _duration(value: Any) -> float:
    try:
        seconds = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if not 0 <= seconds <= MAX_DURATION_S:  # NaN fails too
        raise PvtiOptionsError(
            f'{ENV_VAR}: "duration" must be seconds >= 0 (0: no limit) and at most '
            f"{MAX_DURATION_S:g}, not {value!r}"
        )
    return seconds


def _channels(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise PvtiOptionsError(f'{ENV_VAR}: "channels" must be a list of names, not {value!r}')
    return tuple(value) or None


def parse_options(text: str | None) -> PvtiOptions | None:
    """The options in ``text`` (the variable's value), or None when it is unset."""
    if text is None:
        return None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PvtiOptionsError(f"{ENV_VAR} is not valid JSON ({exc.msg}): {text!r}") from None
    if not isinstance(raw, dict):
        raise PvtiOptionsError(f"{ENV_VAR} must be a JSON object, not {text!r}")
    unknown = [k for k in raw if k not in KNOWN_KEYS]
    if unknown:
        raise PvtiOptionsError(
            f'{ENV_VAR}: unknown key "{unknown[0]}" (known keys: {", ".join(KNOWN_KEYS)})'
        )
    directory = raw.get("directory", ".")
    if not isinstance(directory, str) or not directory:
        raise PvtiOptionsError(f'{ENV_VAR}: "directory" must be a folder name, not {directory!r}')
    return PvtiOptions(
        enable=_flag("enable", raw.get("enable", True)),
        directory=Path(directory),
        channels=_channels(raw["channels"]) if "channels" in raw else None,
        duration_s=_duration(raw.get("duration", 0)),
    )
