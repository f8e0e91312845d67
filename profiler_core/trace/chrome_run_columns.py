"""A run of plain Chrome events' fields (lists, one per field, in file order) checked and
made numpy columns, as the per-event path would read each event: the part of the fast
path that is the same whether the run was parsed into dicts or decoded into structs."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.trace import chrome_fields as fields
from profiler_core.trace.chrome_columns import stamps
from profiler_core.trace.json_typed import MISSING

#: a thread event with no ``tid``: the process's main track (as ``Builder.thread``)
NO_TID = MISSING
NUMBERS = {int, float}
IDS = {int, str}
_TIDS = {int, str, type(NO_TID)}
_MAX_TS = fields.MAX_MICROSECONDS * 1000  # as fields.timestamp
_MAX_NUMBER = 1.7e308  # as fields.number


class Rows:
    """A run's span and instant rows, checked and made columns, not yet added; ``args``
    is the reader's (``Builder`` adds them with ``args.add``)."""

    def __init__(self, ts_col: np.ndarray, end_col: np.ndarray, kinds: np.ndarray,
                 names: list[str], cats: list[str], args: Any, ids: tuple) -> None:  # fmt: skip
        self.ts, self.end, self.kinds = ts_col, end_col, kinds
        self.names, self.cats, self.args, self.ids = names, cats, args, ids


def rows(ts: list, dur: list, pid: list, tid: list, spans: list[bool] | None,
         names: list[str], cats: list[str], args: Any) -> Rows | None:  # fmt: skip
    """The rows of X/i/I events (``spans`` None: every one an X) from their fields, with
    the per-event path's defaults already in place; None when one is not plain."""
    ts_types, dur_types = set(map(type, ts)), set(map(type, dur))
    pid_types, tid_types = set(map(type, pid)), set(map(type, tid))
    if not (ts_types <= NUMBERS and dur_types <= NUMBERS and pid_types <= IDS
            and tid_types <= _TIDS):  # fmt: skip
        return None
    try:  # stamps as written: int64 while every one is an int (chrome_columns.stamps)
        ts_col = np.array(ts, np.int64 if ts_types <= {int} else np.float64)
        dur_col = np.array(dur, np.float64)
        end_col = _ends(ts, dur, ts_col, dur_col, ts_types | dur_types <= {int})
    except OverflowError:  # an integer past int64: the per-event path says what is wrong
        return None
    ok = (
        in_range(ts_col)
        and in_range(end_col)
        and np.isfinite(dur_col).all()
        and (np.abs(dur_col) <= _MAX_NUMBER).all()
        and (dur_col >= 0).all()
    )
    if not ok:
        return None
    if spans is None:
        kinds = np.full(len(ts), EventKind.SPAN, np.uint8)
    else:
        kinds = np.where(np.array(spans, bool), EventKind.SPAN, EventKind.INSTANT)
    ids = (pid, tid, pid_types == {int}, tid_types == {int})
    return Rows(ts_col, end_col, kinds.astype(np.uint8), names, cats, args, ids)


def in_range(ts_col: np.ndarray) -> bool:
    """Finite stamps within what ``fields.timestamp`` accepts."""
    return bool(
        np.isfinite(ts_col).all() and ((ts_col >= -_MAX_TS) & (ts_col <= _MAX_TS)).all()
    )  # no abs(): int64's min


def _ends(ts: list, dur: list, ts_col: np.ndarray, dur_col: np.ndarray, ints: bool) -> np.ndarray:
    """``stamps([t + d ...])``, the ends as the per-event path makes them (Python's sums),
    added in numpy where that is exact: every stamp and duration below 2**53."""
    if len(ts_col) and max(np.abs(ts_col).max(), np.abs(dur_col).max()) < 2**53:
        return ts_col + (dur_col.astype(np.int64) if ints else dur_col)
    return stamps([t + d for t, d in zip(ts, dur, strict=True)])


def flow_points(ts: list, ids: list, cats: list, pid: list, tid: list, phases: list[str],
                bp_e: list[bool]) -> tuple | None:  # fmt: skip
    """(ts, ids, categories, phases, binds to the enclosing span, int pids, int tids) of
    flow events as ``Builder.flow`` reads them; None when one of them is not plain."""
    pid_types, tid_types = set(map(type, pid)), set(map(type, tid))
    ts_types = set(map(type, ts))
    if not (
        ts_types <= NUMBERS
        and set(map(type, ids)) <= IDS
        and set(map(type, cats)) == {str}
        and pid_types <= IDS
        and tid_types <= _TIDS
    ):
        return None
    try:
        if not in_range(np.array(ts, np.int64 if ts_types <= {int} else np.float64)):
            return None
    except OverflowError:
        return None
    if str in set(map(type, ids)):  # "12" is the id 12, as fields.ident reads it
        ident = Memo(lambda i: fields.ident({"id": i}, "id"))
        ids = [i if i.__class__ is int else ident[(i,)] for i in ids]
    return ts, ids, cats, phases, bp_e, pid_types == {int}, tid_types == {int}


class Memo(dict):
    """fn(*key) per key, computed the first time a key is met (in the run's order)."""

    def __init__(self, fn: Any) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.fn(*key)
        return value
