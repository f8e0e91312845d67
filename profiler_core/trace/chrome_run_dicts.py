"""A run of plain Chrome events parsed into dicts, read a field at a time (a list
comprehension per field while the dicts are still in the CPU's caches) for
``chrome_run_columns``; args are made compact JSON text as the per-event path makes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import repeat
from operator import contains
from typing import Any

import numpy as np

from profiler_core.trace import chrome_fields as fields
from profiler_core.trace import chrome_run_columns as columns
from profiler_core.trace.chrome_columns import ArgsText
from profiler_core.trace.chrome_run_columns import IDS, NO_TID, NUMBERS, Rows

_FLOWS = frozenset(("s", "t", "f"))
_COMPACT = json.JSONEncoder(separators=(",", ":"))  # as json.dumps(..., separators=...)


def _compact_encoder() -> Callable[[Any], str]:
    """``_COMPACT.encode``, text for text, with the C encoder made once instead of once per
    call (half the time of a small args object). No circular check: parsed JSON has no
    cycles. ``c_make_encoder`` is the standard library's own accelerator, not a public API:
    where it is missing, takes other arguments or encodes otherwise, the public encoder."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator (PyPy)
        return _COMPACT.encode
    c = _COMPACT
    try:
        encode = make(
            None,
            c.default,
            json.encoder.encode_basestring_ascii,
            c.indent,
            c.key_separator,
            c.item_separator,
            c.sort_keys,
            c.skipkeys,
            c.allow_nan,
        )
        fast = lambda value: "".join(encode(value, 0))  # noqa: E731
        probe = {"a": [1, 2.5, None, True, "é\n"], "b": {"c": -3}}
        if fast(probe) == _COMPACT.encode(probe):
            return fast
    except (TypeError, ValueError):  # another Python's signature
        pass
    return _COMPACT.encode


_compact = _compact_encoder()


def plain(ev: dict, ph: str) -> bool:
    """One event passes a run's type checks (its numbers are checked there)."""
    common = (
        type(ev.get("ts")) in NUMBERS
        and type(ev.get("pid", 0)) in IDS
        and type(ev.get("tid", 0)) in IDS
        and type(ev.get("cat", "")) is str
    )
    if ph in _FLOWS:
        return common and type(ev.get("id")) in IDS
    args = ev.get("args")
    return (
        common
        and (ph != "X" or type(ev.get("dur")) in NUMBERS)
        and type(ev.get("name", "")) is str
        and (args is None or (type(args) is dict and fields.OPEN_ARG not in args))
        and "bind_id" not in ev
        and (ph == "X" or ev.get("s", "t") not in ("g", "p"))
    )


class DictArgs:
    """A run's args objects (None where absent), added as compact JSON text."""

    def __init__(self, args: list) -> None:
        self.args = args

    def add(self, out: ArgsText, first: int) -> None:
        args = self.args
        at = [i for i, a in enumerate(args) if a]
        out.add(first + np.array(at, np.int64), [_compact(args[i]) for i in at])


def ids(events: list[dict]) -> tuple[list, list]:
    """Each event's pid and tid, with the per-event path's defaults."""
    return [ev.get("pid", 0) for ev in events], [ev.get("tid", NO_TID) for ev in events]


def rows(events: list[dict], phases: list[str], pid: list, tid: list) -> Rows | None:
    """The rows of X/i/I ``events`` (whose ``ids`` are ``pid``, ``tid``) as columns; None
    when one of them is not plain."""
    spans = [ph == "X" for ph in phases]
    all_spans = all(spans)
    if all_spans:
        dur = [ev.get("dur") for ev in events]
    else:
        dur = [ev.get("dur") if x else 0 for ev, x in zip(events, spans, strict=True)]
    name = [ev.get("name", "") for ev in events]
    cat = [ev.get("cat", "") for ev in events]
    args = [ev.get("args") for ev in events]
    present = [a for a in args if a]
    if not (
        set(map(type, name)) == {str}
        and set(map(type, cat)) == {str}
        and set(map(type, args)) <= {dict, type(None)}
        and not any(map(contains, events, repeat("bind_id")))
        and (not present or fields.OPEN_ARG not in set().union(*present))
        and (all_spans or all(x or ev.get("s", "t") not in ("g", "p")
                              for ev, x in zip(events, spans, strict=True)))
    ):  # fmt: skip
        return None
    ts = [ev.get("ts") for ev in events]
    return columns.rows(ts, dur, pid, tid, None if all_spans else spans, name, cat,
                        DictArgs(args))  # fmt: skip


def flow_points(events: list[dict], pid: list, tid: list) -> tuple | None:
    """``chrome_run_columns.flow_points`` of flow events parsed into dicts."""
    return columns.flow_points(
        [ev.get("ts") for ev in events],
        [ev.get("id") for ev in events],
        [ev.get("cat", "") for ev in events],
        pid,
        tid,
        [ev["ph"] for ev in events],
        [ev.get("bp") == "e" for ev in events],
    )
