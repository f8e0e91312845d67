"""The common events of a Chrome trace read a run at a time instead of one by one.

Most of a big trace is complete spans (``X``) and thread instants (``i``/``I``) with
numeric ``ts``/``dur``, int or string ``pid``/``tid``, string names and an object (or no)
``args`` -- and, in a PyTorch (Kineto) trace, flow points (``s``/``t``/``f``) between
them. A run of such events is read with one list comprehension per field and checked
with numpy; labels, categories and tracks are interned in the run's order, so ids come
out exactly as the per-event path gives them. A run with anything unusual (a bool pid, a
NaN stamp, a ``bind_id``, a scoped instant, a flow id that is a float...) is not touched:
its events go through the per-event path, which skips and counts exactly as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise, repeat
from operator import contains
from typing import TYPE_CHECKING, Any

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.trace import chrome_fields as fields
from profiler_core.trace.chrome_columns import stamps

if TYPE_CHECKING:
    from profiler_core.trace.chrome_builder import Builder

_NUMBERS = {int, float}
_IDS = {int, str}
_NO_TID = object()
_PLAIN = frozenset(("X", "i", "I", "s", "t", "f"))  # the phases a run is made of
_FLOWS = frozenset(("s", "t", "f"))
_COMPACT = json.JSONEncoder(separators=(",", ":"))  # as json.dumps(..., separators=...)
_MAX_TS = fields.MAX_MICROSECONDS * 1000  # as fields.timestamp
_MAX_NUMBER = 1.7e308  # as fields.number


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


class _Memo(dict):
    """fn(*key) per key, computed the first time a key is met (in the run's order)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.fn(*key)
        return value


def add_chunk(builder: Builder, chunk: list[Any]) -> None:
    """Add ``chunk``'s events in order: runs of plain X/i events at once, the rest (and any
    run that is not plain after all) one by one."""
    phases = [ev.get("ph") if ev.__class__ is dict else None for ev in chunk]
    try:
        plain = np.fromiter(map(_PLAIN.__contains__, phases), bool, len(phases))
    except TypeError:  # a phase may be any JSON value: a list is unhashable, so == only
        plain = np.fromiter((type(ph) is str and ph in _PLAIN for ph in phases), bool,
                            len(phases))  # fmt: skip
    edges = np.flatnonzero(plain[1:] != plain[:-1]) + 1
    bounds = [0, *edges.tolist(), len(chunk)]
    for a, b in pairwise(bounds):
        if a == b:
            continue
        if not plain[a] or not add_run(builder, chunk[a:b], phases[a:b]):
            _add_split(builder, chunk[a:b], phases[a:b] if plain[a] else None)


def _add_split(builder: Builder, events: list[Any], phases: list[Any] | None) -> None:
    """A run that was not plain as a whole: its plain stretches at once, the rest (and any
    stretch still refused) one by one -- one odd event costs itself, not its chunk."""
    if phases is None:
        for ev in events:
            builder.add(ev)
        return
    ok = [_plain(ev, ph) for ev, ph in zip(events, phases, strict=True)]
    i = 0
    while i < len(events):
        j = i + 1
        while j < len(events) and ok[j] == ok[i]:
            j += 1
        if not ok[i] or not add_run(builder, events[i:j], phases[i:j]):
            for ev in events[i:j]:
                builder.add(ev)
        i = j


def _plain(ev: dict, ph: str) -> bool:
    """One event passes ``add_run``'s type checks (its numbers are checked there)."""
    common = (
        type(ev.get("ts")) in _NUMBERS
        and type(ev.get("pid", 0)) in _IDS
        and type(ev.get("tid", 0)) in _IDS
        and type(ev.get("cat", "")) is str
    )
    if ph in _FLOWS:
        return common and type(ev.get("id")) in _IDS
    args = ev.get("args")
    return (
        common
        and (ph != "X" or type(ev.get("dur")) in _NUMBERS)
        and type(ev.get("name", "")) is str
        and (args is None or (type(args) is dict and fields.OPEN_ARG not in args))
        and "bind_id" not in ev
        and (ph == "X" or ev.get("s", "t") not in ("g", "p"))
    )


def add_run(builder: Builder, events: list[dict], phases: list[str]) -> bool:
    """Add a run of X/i/I events and flow points at once; False (and nothing added) when
    one of them is not plain, so the caller reads them one by one."""
    flow_at = [i for i, ph in enumerate(phases) if ph in _FLOWS] if _FLOWS & set(phases) else []
    if not flow_at:
        rows = _rows(events, phases)
        if rows is None:
            return False
        _add_rows(builder, rows, _tracks(builder, *rows.ids))
        return True
    is_flow = np.zeros(len(events), bool)
    is_flow[flow_at] = True
    row_events = [ev for ev, f in zip(events, is_flow.tolist(), strict=True) if not f]
    rows = _rows(row_events, [ph for ph in phases if ph not in _FLOWS]) if row_events else None
    points = _flow_points([events[i] for i in flow_at])
    if points is None or (row_events and rows is None):
        return False
    pid = [ev.get("pid", 0) for ev in events]
    tid = [ev.get("tid", _NO_TID) for ev in events]
    int_pids = points[5] and (rows is None or rows.ids[2])
    int_tids = points[6] and (rows is None or rows.ids[3])
    track = _tracks(builder, pid, tid, int_pids, int_tids)
    if rows is not None:
        _add_rows(builder, rows, track[~is_flow])
    ts, ids, cats, phs, bp_e, _, _ = points
    builder.flows.extend(cats, ids, phs, track[is_flow].tolist(), bp_e)
    builder.flow_ts.extend(ts)
    return True


class _Rows:
    """A run's span and instant rows, checked and made columns, not yet added."""

    def __init__(self, ts_col: np.ndarray, end_col: np.ndarray, kinds: np.ndarray,
                 names: list[str], cats: list[str], args: list, ids: tuple) -> None:  # fmt: skip
        self.ts, self.end, self.kinds = ts_col, end_col, kinds
        self.names, self.cats, self.args, self.ids = names, cats, args, ids


def _rows(events: list[dict], phases: list[str]) -> _Rows | None:
    """The rows of X/i/I ``events`` as columns; None when one of them is not plain."""
    spans = [ph == "X" for ph in phases]
    all_spans = all(spans)
    ts, dur, pid, tid, name, cat = _fields(events, spans, all_spans)
    args = [ev.get("args") for ev in events]
    present = [a for a in args if a]
    ts_types, dur_types = set(map(type, ts)), set(map(type, dur))
    pid_types, tid_types = set(map(type, pid)), set(map(type, tid))
    if not (
        ts_types <= _NUMBERS
        and dur_types <= _NUMBERS
        and pid_types <= _IDS
        and tid_types <= {int, str, object}
        and set(map(type, name)) == {str}
        and set(map(type, cat)) == {str}
        and set(map(type, args)) <= {dict, type(None)}
        and not any(map(contains, events, repeat("bind_id")))
        and (not present or fields.OPEN_ARG not in set().union(*present))
        and (all_spans or all(x or ev.get("s", "t") not in ("g", "p")
                              for ev, x in zip(events, spans, strict=True)))
    ):  # fmt: skip
        return None
    try:  # stamps as written: int64 while every one is an int (chrome_columns.stamps)
        ts_col = np.array(ts, np.int64 if ts_types <= {int} else np.float64)
        dur_col = np.array(dur, np.float64)
        end_col = _ends(ts, dur, ts_col, dur_col, ts_types | dur_types <= {int})
    except OverflowError:  # an integer past int64: the per-event path says what is wrong
        return None
    ok = (
        _in_range(ts_col)
        and _in_range(end_col)
        and np.isfinite(dur_col).all()
        and (np.abs(dur_col) <= _MAX_NUMBER).all()
        and (dur_col >= 0).all()
    )
    if not ok:
        return None
    if all_spans:
        kinds = np.full(len(events), EventKind.SPAN, np.uint8)
    else:
        kinds = np.where(np.array(spans, bool), EventKind.SPAN, EventKind.INSTANT)
    ids = (pid, tid, pid_types == {int}, tid_types == {int})
    return _Rows(ts_col, end_col, kinds.astype(np.uint8), name, cat, args, ids)


def _in_range(ts_col: np.ndarray) -> bool:
    """Finite stamps within what ``fields.timestamp`` accepts."""
    return bool(
        np.isfinite(ts_col).all() and ((ts_col >= -_MAX_TS) & (ts_col <= _MAX_TS)).all()
    )  # no abs(): int64's min


def _add_rows(builder: Builder, rows: _Rows, track: np.ndarray) -> None:
    first = len(builder.ts)
    builder.ts.extend(rows.ts)
    builder.end.extend(rows.end)
    builder.track.extend(track)
    builder.channel.extend(_interned(builder.channels, rows.cats))
    builder.label.extend(_interned(builder.labels, rows.names))
    builder.kind.extend(rows.kinds)
    args = rows.args
    at = [i for i, a in enumerate(args) if a]
    builder.args_text.add(first + np.array(at, np.int64), [_compact(args[i]) for i in at])


def _flow_points(events: list[dict]) -> tuple | None:
    """(ts, ids, categories, phases, binds to the enclosing span, int pids, int tids) of
    flow events as ``Builder.flow`` reads them; None when one of them is not plain."""
    ts = [ev.get("ts") for ev in events]
    ids = [ev.get("id") for ev in events]
    cats = [ev.get("cat", "") for ev in events]
    pid_types = {type(ev.get("pid", 0)) for ev in events}
    tid_types = {type(ev.get("tid", _NO_TID)) for ev in events}
    ts_types = set(map(type, ts))
    if not (
        ts_types <= _NUMBERS
        and set(map(type, ids)) <= _IDS
        and set(map(type, cats)) == {str}
        and pid_types <= _IDS
        and tid_types <= {int, str, object}
    ):
        return None
    try:
        if not _in_range(np.array(ts, np.int64 if ts_types <= {int} else np.float64)):
            return None
    except OverflowError:
        return None
    if str in set(map(type, ids)):  # "12" is the id 12, as fields.ident reads it
        ident = _Memo(lambda i: fields.ident({"id": i}, "id"))
        ids = [i if i.__class__ is int else ident[(i,)] for i in ids]
    phases = [ev["ph"] for ev in events]
    bp_e = [ev.get("bp") == "e" for ev in events]
    return ts, ids, cats, phases, bp_e, pid_types == {int}, tid_types == {int}


def _ends(ts: list, dur: list, ts_col: np.ndarray, dur_col: np.ndarray, ints: bool) -> np.ndarray:
    """``stamps([t + d ...])``, the ends as the per-event path makes them (Python's sums),
    added in numpy where that is exact: every stamp and duration below 2**53."""
    if len(ts_col) and max(np.abs(ts_col).max(), np.abs(dur_col).max()) < 2**53:
        return ts_col + (dur_col.astype(np.int64) if ints else dur_col)
    return stamps([t + d for t, d in zip(ts, dur, strict=True)])


def _fields(events: list[dict], spans: list[bool], all_spans: bool) -> tuple[list[Any], ...]:
    """(ts, dur, pid, tid, name, cat) of every event, with the per-event path's defaults: a
    list comprehension per field (a third faster than one pass making a tuple per event and
    transposing them)."""
    if all_spans:
        dur = [ev.get("dur") for ev in events]
    else:
        dur = [ev.get("dur") if x else 0 for ev, x in zip(events, spans, strict=True)]
    return (
        [ev.get("ts") for ev in events],
        dur,
        [ev.get("pid", 0) for ev in events],
        [ev.get("tid", _NO_TID) for ev in events],
        [ev.get("name", "") for ev in events],
        [ev.get("cat", "") for ev in events],
    )


def _interned(ids: dict[str, int], names: list[str]) -> np.ndarray:
    """Each name's id, new names numbered in order of first appearance."""
    try:  # the usual chunk names no new label: one lookup pass
        return np.fromiter(map(ids.__getitem__, names), np.int32, len(names))
    except KeyError:
        pass
    for name in dict.fromkeys(names):
        ids.setdefault(name, len(ids))
    return np.fromiter(map(ids.__getitem__, names), np.int32, len(names))


def _tracks(builder: Builder, pid: list, tid: list, int_pids: bool, int_tids: bool) -> np.ndarray:
    """Each event's thread track, made in the order the per-event path makes them; ids that
    are all ints (the usual) are taken as they are."""
    ident = _Memo(lambda p: fields.ident({"pid": p}, "pid"))
    pids = pid if int_pids else [p if p.__class__ is int else ident[(p,)] for p in pid]
    if int_tids:
        tids = tid
    else:
        tids = [
            p if t is _NO_TID else t if t.__class__ is int else ident[(t,)]
            for p, t in zip(pids, tid, strict=True)
        ]
    track = _Memo(builder.tracks.thread)
    return np.fromiter(map(track.__getitem__, zip(pids, tids, strict=True)), np.int32, len(pids))
