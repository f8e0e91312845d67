"""Reading one Chrome trace event's fields as Chrome's trace viewer and Perfetto do.

Tools write the same field many ways: ``ts`` as a number or a numeric string, ``pid`` and
``tid`` as numbers or strings (or no ``tid`` at all: the process's main track), ``ph`` as a
word of which only the first letter counts. What cannot be read raises ``Skip`` with the
reason the event is counted under; the file is never refused for one event.
"""

from __future__ import annotations

import math
from typing import Any

#: |ts| and |dur| past this many µs would not fit int64 nanoseconds
MAX_MICROSECONDS = 9.2e15
#: marks a span this project exported while it was still open (``chrome.export_chrome``)
OPEN_ARG = "pvti_open"


class Skip(Exception):  # noqa: N818 - a reason to skip one event, not an error
    """This event is skipped; ``str(self)`` is the reason it is counted under."""


def phase(ev: Any) -> str:
    if not isinstance(ev, dict):
        raise Skip(f"not an object ({type(ev).__name__})")
    ph = ev.get("ph")
    if not isinstance(ph, str) or not ph:
        raise Skip("no 'ph'")
    return ph[0]


def number(ev: dict, key: str, *, required: bool = True, default: float = 0.0) -> int | float:
    """A finite number given as a JSON number or a numeric string; an integer stays an int,
    so nanosecond epochs (~1.7e18) keep every digit."""
    value = ev.get(key)
    if value is None:
        if required:
            raise Skip(f"no '{key}'")
        return default
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if text.lstrip("-").isdigit() and len(text) < 25 else float(text)
        except ValueError:
            raise Skip(f"'{key}' is not a number") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise Skip(f"'{key}' is not a number")
    # abs() first: math.isfinite of an int past float's range raises OverflowError
    if abs(value) > 1.7e308 or not math.isfinite(value):
        raise Skip(f"'{key}' is out of range")
    return value


def timestamp(ev: dict, key: str = "ts") -> int | float:
    value = number(ev, key)
    if abs(value) > MAX_MICROSECONDS * 1000:  # larger than any epoch in ns
        raise Skip(f"'{key}' is out of range")
    return value


def ident(ev: dict, key: str, default: Any = None) -> int | str:
    """A pid, tid or id: an int or a string (a numeric string is its number)."""
    value = ev.get(key, default)
    if isinstance(value, bool) or value is None:
        raise Skip(f"no '{key}'")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit() and len(text) < 20:
            try:
                return int(text)
            except ValueError:  # "--5", "²": digits to str.isdigit(), not to int()
                return value
        return value
    raise Skip(f"'{key}' is not an id")


def text(ev: dict, key: str, default: str = "") -> str:
    value = ev.get(key, default)
    if value is None:
        return default
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise Skip(f"'{key}' is not a string")


def args(ev: dict) -> dict | None:
    value = ev.get("args")
    if value is None or isinstance(value, dict):
        return value
    return {"value": value}


def flow_id(ev: dict) -> int | str | None:
    """The id binding flow events: ``id``, or ``id2`` ({"local"|"global": id})."""
    if "id" in ev:
        return ident(ev, "id")
    id2 = ev.get("id2")
    if isinstance(id2, dict):
        for scope in ("global", "local"):
            if scope in id2:
                return ident(id2, scope)
    return None


def other_data(
    doc: dict, origin_key: str, units_key: str, gaps_key: str
) -> tuple[int, dict[str, str], int]:
    """What this project's exports keep in ``otherData``: the origin (epoch ns), series
    units and how many series values were left out; defaults for anything else written."""
    other = doc.get("otherData")
    other = other if isinstance(other, dict) else {}
    origin = other.get(origin_key, 0)
    origin = origin if isinstance(origin, int) and not isinstance(origin, bool) else 0
    if not 0 <= origin < 2**62:
        origin = 0
    units = other.get(units_key)
    units = (
        {k: v for k, v in units.items() if isinstance(v, str)} if isinstance(units, dict) else {}
    )
    gaps = other.get(gaps_key)
    gaps = gaps if isinstance(gaps, int) and not isinstance(gaps, bool) and gaps > 0 else 0
    return origin, units, gaps
