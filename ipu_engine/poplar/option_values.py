"""The value types of Poplar's engine options: each parser takes the key and the raw value
(a JSON scalar from ``POPLAR_ENGINE_OPTIONS`` or a Python value from ``options=``) and gives
the typed value, or raises ``OptionError`` naming the key, the value and what is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ipu_engine.common.errors import OptionError

Parser = Callable[[str, Any], Any]


def scalar(key: str, value: Any) -> None:
    """Every option value is one string, number or boolean: never a list or a dict (whose
    text could be nested a million levels deep)."""
    if not isinstance(value, str | bool | int | float):
        raise OptionError(
            f"engine option {key!r}: the value must be a string, number or boolean, "
            f"got a {type(value).__name__}"
        )


def boolean(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise OptionError(f'engine option {key!r}: {value!r} is not a boolean; use "true" or "false"')


def count(key: str, value: Any) -> int:
    """An integer >= 0 (Poplar's "Integer" options: run counts, stack sizes, a replica)."""
    number = -1
    if not isinstance(value, bool | float):
        digits = str(value).strip()
        try:  # Poplar takes "0x" hexadecimal integers too
            number = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
        except ValueError:
            number = -1
    if number < 0:
        raise OptionError(f"engine option {key!r}: {value!r} is not a count (an integer >= 0)")
    return number


def text(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise OptionError(f"engine option {key!r}: {value!r} must be a non-empty string")
    return value


def path(key: str, value: Any) -> str:
    found = text(key, value)
    if "\0" in found:
        raise OptionError(f"engine option {key!r}: {value!r} is not a path (it holds a NUL)")
    return found


def regex(key: str, value: Any) -> str:
    """A regular expression (Poplar's ``profiler.*.filter`` options), checked now so a typo
    is told at Engine() and not ignored."""
    found = text(key, value)
    try:
        re.compile(found)
    except re.error as exc:
        raise OptionError(
            f"engine option {key!r}: {value!r} is not a regular expression ({exc})"
        ) from None
    return found


def choice(*choices: str) -> Parser:
    def parse(key: str, value: Any) -> str:
        if str(value) not in choices:
            raise OptionError(
                f"engine option {key!r}: {value!r} is not one of {', '.join(choices)}"
            )
        return str(value)

    return parse
