"""The common events of a Chrome trace read a run at a time instead of one by one.

Most of a big trace is complete spans (``X``) and thread instants (``i``/``I``) with
numeric ``ts``/``dur``, int or string ``pid``/``tid``, string names and an object (or no)
``args`` -- and, in a PyTorch (Kineto) trace, flow points (``s``/``t``/``f``) between
them. A run of such events is read a field at a time and checked with numpy; labels,
categories and tracks are interned in the run's order, so ids come out exactly as the
per-event path gives them. A run with anything unusual (a bool pid, a NaN stamp, a
``bind_id``, a scoped instant, a flow id that is a float...) is not touched: its events go
through the per-event path, which skips and counts exactly as before.

A chunk comes as dicts (``chrome_run_dicts`` reads their runs) or, where msgspec decoded
it, as ``TypedEvents`` structs (``chrome_run_typed``): events of other phases, and any
run the structs' reader refuses, are read from the chunk's text again as dicts.
"""

from __future__ import annotations

from itertools import compress, pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from profiler_core.trace import chrome_fields as fields
from profiler_core.trace import chrome_native, chrome_run_dicts, chrome_run_typed
from profiler_core.trace.chrome_columns import stamps
from profiler_core.trace.chrome_run_columns import NO_TID, Memo, Rows
from profiler_core.trace.json_typed import TypedEvents

if TYPE_CHECKING:
    from profiler_core.trace.chrome_builder import Builder

_PLAIN = frozenset(("X", "i", "I", "s", "t", "f"))  # the phases a run is made of
_FLOWS = frozenset(("s", "t", "f"))


def add_chunk(builder: Builder, chunk: list[Any]) -> None:
    """Add ``chunk``'s events in order: runs of plain X/i events at once, the rest (and any
    run that is not plain after all) one by one; a chunk the native kernel read, its way."""
    if isinstance(chunk, chrome_native.NativeEvents):
        chrome_native.add_chunk(builder, chunk)
        return
    typed = isinstance(chunk, TypedEvents)
    if typed:
        phases = chrome_run_typed.values(chunk, "ph")  # a string, or MISSING
    else:
        phases = [ev.get("ph") if ev.__class__ is dict else None for ev in chunk]
    try:
        plain = np.fromiter(map(_PLAIN.__contains__, phases), bool, len(phases))
    except TypeError:  # a phase may be any JSON value: a list is unhashable, so == only
        plain = np.fromiter((type(ph) is str and ph in _PLAIN for ph in phases), bool,
                            len(phases))  # fmt: skip
    edges = np.flatnonzero(plain[1:] != plain[:-1]) + 1
    bounds = [0, *edges.tolist(), len(chunk)]
    for a, b in pairwise(bounds):
        if a == b or (plain[a] and add_run(builder, chunk[a:b], phases[a:b])):
            continue
        events = chunk.dicts(a, b) if typed else chunk[a:b]
        _add_split(builder, events, phases[a:b] if plain[a] else None)


def _add_split(builder: Builder, events: list[Any], phases: list[Any] | None) -> None:
    """A run that was not plain as a whole: its plain stretches at once, the rest (and any
    stretch still refused) one by one -- one odd event costs itself, not its chunk."""
    if phases is None:
        for ev in events:
            builder.add(ev)
        return
    ok = [chrome_run_dicts.plain(ev, ph) for ev, ph in zip(events, phases, strict=True)]
    i = 0
    while i < len(events):
        j = i + 1
        while j < len(events) and ok[j] == ok[i]:
            j += 1
        if not ok[i] or not add_run(builder, events[i:j], phases[i:j]):
            for ev in events[i:j]:
                builder.add(ev)
        i = j


def add_run(builder: Builder, events: list, phases: list[str]) -> bool:
    """Add a run of X/i/I events and flow points (dicts or structs) at once; False (and
    nothing added) when one of them is not plain, so the caller reads them one by one."""
    read = chrome_run_dicts if events[0].__class__ is dict else chrome_run_typed
    pid, tid = read.ids(events)
    if not _FLOWS & set(phases):
        rows = read.rows(events, phases, pid, tid)
        if rows is None:
            return False
        _add_rows(builder, rows, _tracks(builder, *rows.ids))
        return True
    is_flow = [ph in _FLOWS for ph in phases]
    is_row = [not f for f in is_flow]
    row_events = list(compress(events, is_row))
    rows = None
    if row_events:
        rows = read.rows(row_events, list(compress(phases, is_row)), list(compress(pid, is_row)),
                         list(compress(tid, is_row)))  # fmt: skip
        if rows is None:
            return False
    points = read.flow_points(list(compress(events, is_flow)), list(compress(pid, is_flow)),
                              list(compress(tid, is_flow)))  # fmt: skip
    if points is None:
        return False
    int_pids = points[5] and (rows is None or rows.ids[2])
    int_tids = points[6] and (rows is None or rows.ids[3])
    track = _tracks(builder, pid, tid, int_pids, int_tids)
    flow_mask = np.array(is_flow, bool)
    if rows is not None:
        _add_rows(builder, rows, track[~flow_mask])
    ts, ids, cats, phs, bp_e, _, _ = points
    builder.flows.extend(cats, ids, phs, track[flow_mask].tolist(), bp_e)
    builder.flow_ts.extend(stamps(ts))
    return True


def _add_rows(builder: Builder, rows: Rows, track: np.ndarray) -> None:
    first = len(builder.ts)
    builder.ts.extend(rows.ts)
    builder.end.extend(rows.end)
    builder.track.extend(track)
    builder.channel.extend(_interned(builder.channels, rows.cats))
    builder.label.extend(_interned(builder.labels, rows.names))
    builder.kind.extend(rows.kinds)
    rows.args.add(builder.args_text, first)


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
    ident = Memo(lambda p: fields.ident({"pid": p}, "pid"))
    pids = pid if int_pids else [p if p.__class__ is int else ident[(p,)] for p in pid]
    if int_tids:
        tids = tid
    else:
        tids = [
            p if t is NO_TID else t if t.__class__ is int else ident[(t,)]
            for p, t in zip(pids, tid, strict=True)
        ]
    track = Memo(builder.tracks.thread)
    return np.fromiter(map(track.__getitem__, zip(pids, tids, strict=True)), np.int32, len(pids))
