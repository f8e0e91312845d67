"""A chunk of Chrome trace events read by the native kernel (``_chrome_scan``, C) straight
into numpy columns: no Python object per event or field for the common events (X spans,
thread instants, flow points with plain fields), and their args kept as the bytes the file
holds, as the typed path keeps them.

The kernel refuses a buffer it would read otherwise than ``json.loads`` (NaN, invalid
UTF-8, a non-object item, deep nesting, malformed JSON): the caller then reads it as before
(msgspec structs or dicts), as it does a chunk of mostly other events. The other events of
a chunk it keeps (other phases, odd fields: a numeric-string pid, a bool tid, an escaped
key, a duplicate key...) come back as dicts parsed by ``json_parse.loads`` and go through
``Builder.add`` in file order, so every tolerant rule of the per-event path decides them as
before.

Names, categories and (pid, tid) pairs are interned by the kernel (ids of its own); each
run of kernel events maps them to the builder's labels, channels and tracks, new ones
numbered in order of first appearance -- exactly the ids the per-event path gives.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.native import native_module
from profiler_core.trace.json_parse import loads

_chrome_scan = native_module(
    "profiler_core.trace._chrome_scan", "the Chrome JSON import's kernel is a C module"
)

if TYPE_CHECKING:
    from profiler_core.trace.chrome_builder import Builder

SPAN, INSTANT, FLOW_S, FLOW_F = 0, 1, 2, 4
OTHER = 255
TS_INT, END_INT, BP_E = 1, 2, 4
_DTYPES = (np.uint8, np.uint8, np.int64, np.float64, np.int64, np.float64, np.int32,
           np.int32, np.int32, np.int64, np.int64, np.int64, np.int64, np.int64)  # fmt: skip
#: a chunk with more other events than this share is left to the typed path: Builder.add
#: takes ~3-5 µs an event, the typed path's runs ~1.5 µs (numeric-string tids in every
#: event read 3x slower one by one than as the typed path's runs)
_MOST_OTHERS = 0.25
_NAMES = ("cls", "flags", "ts_i", "ts_f", "end_i", "end_f", "name", "cat", "pair", "id",
          "args_at", "args_len", "start", "stop")  # fmt: skip


class NativeReader:
    """The kernel for one file's import: its interned strings and pairs, the column buffers
    it fills (reused from chunk to chunk), and the maps of its ids to the builder's."""

    def __init__(self, max_depth: int) -> None:
        self.scanner = _chrome_scan.Scanner(max_depth)
        self.capacity = 0
        self.columns: tuple[np.ndarray, ...] = ()
        self.argbuf = np.zeros(0, np.uint8)
        # kernel id -> builder id (-1: not met in a committed run yet)
        self.labels = np.full(0, -1, np.int32)
        self.channels = np.full(0, -1, np.int32)
        self.tracks = np.full(0, -1, np.int32)

    def read(self, buf: bytes) -> tuple[NativeEvents, int, int] | None:
        """The events complete in ``buf``, where the rest starts and the array's ``]``
        (-1 if not in ``buf``); None when the kernel leaves ``buf`` to the other paths."""
        need = len(buf) // 2 + 1
        if need > self.capacity:
            self.capacity = max(need, 2 * self.capacity)
            self.columns = tuple(np.empty(self.capacity, d) for d in _DTYPES)
            self.argbuf = np.empty(2 * self.capacity, np.uint8)
        got = self.scanner.scan(buf, self.columns, self.argbuf)
        if got is None:
            return None
        n, keep_from, array_end, args_used = got
        cols = {name: col[:n].copy() for name, col in zip(_NAMES, self.columns, strict=True)}
        others = []
        other_at = np.flatnonzero(cols["cls"] == OTHER)
        if len(other_at) > max(_MOST_OTHERS * n, 16):
            return None  # the typed path reads a chunk of mostly odd events faster
        if len(other_at):
            starts, stops = cols["start"][other_at].tolist(), cols["stop"][other_at].tolist()
            text = b"[" + b",".join(buf[a:b] for a, b in zip(starts, stops, strict=True)) + b"]"
            try:
                others = loads(text)
            except (ValueError, RecursionError):  # the kernel was wrong: read as before
                return None
            if len(others) != len(other_at):
                return None
        args = self.argbuf[:args_used].tobytes()
        return NativeEvents(self, n, cols, others, args), keep_from, array_end


class NativeEvents:
    """A chunk's events as the kernel's columns (``cols``, one entry per event in file
    order), the events it did not take as dicts (``others``, in file order), and the args
    objects' bytes (``args_at`` / ``args_len`` in ``cols`` locate each)."""

    def __init__(self, reader: NativeReader, n: int, cols: dict[str, np.ndarray],
                 others: list, args: bytes) -> None:  # fmt: skip
        self.reader, self.n, self.cols, self.others, self.args = reader, n, cols, others, args

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0


def add_chunk(builder: Builder, chunk: NativeEvents) -> None:
    """Add the chunk's events in file order: runs of kernel events at once, the others one
    by one through ``Builder.add``."""
    cls = chunk.cols["cls"]
    other = cls == OTHER
    if not other.any():
        _add_run(builder, chunk, 0, chunk.n)
        return
    edges = np.flatnonzero(other[1:] != other[:-1]) + 1
    bounds = [0, *edges.tolist(), chunk.n]
    others = iter(chunk.others)
    for a, b in pairwise(bounds):
        if other[a]:
            for _ in range(b - a):
                builder.add(next(others))
        else:
            _add_run(builder, chunk, a, b)


def _add_run(builder: Builder, chunk: NativeEvents, a: int, b: int) -> None:
    cols, reader = chunk.cols, chunk.reader
    cls = cols["cls"][a:b]
    flags = cols["flags"][a:b]
    strings = reader.scanner.strings
    reader.tracks, track = _mapped(
        reader.tracks, cols["pair"][a:b], lambda k: builder.tracks.thread(*reader.scanner.pairs[k])
    )
    is_row = cls <= INSTANT
    every_row = bool(is_row.all())
    rows = slice(None) if every_row else np.flatnonzero(is_row)
    if every_row or len(rows):
        f = flags[rows]
        ts = cols["ts_i"][a:b][rows] if (f & TS_INT).all() else cols["ts_f"][a:b][rows]
        end = cols["end_i"][a:b][rows] if (f & END_INT).all() else cols["end_f"][a:b][rows]
        first = len(builder.ts)
        builder.ts.extend(ts)
        builder.end.extend(end)
        builder.track.extend(track[rows])
        reader.channels, channel = _mapped(
            reader.channels, cols["cat"][a:b][rows],
            lambda k: builder.channels.setdefault(strings[k], len(builder.channels)),
        )  # fmt: skip
        builder.channel.extend(channel)
        reader.labels, label = _mapped(
            reader.labels, cols["name"][a:b][rows],
            lambda k: builder.labels.setdefault(strings[k], len(builder.labels)),
        )  # fmt: skip
        builder.label.extend(label)
        kind = np.where(cls[rows] == SPAN, EventKind.SPAN, EventKind.INSTANT).astype(np.uint8)
        builder.kind.extend(kind)
        lengths = cols["args_len"][a:b][rows]
        with_args = np.flatnonzero(lengths)
        if len(with_args):
            at = cols["args_at"][a:b][rows][with_args]
            lengths = lengths[with_args]
            text = chunk.args[int(at[0]) : int(at[-1] + lengths[-1])]
            builder.args_text.add_raw(first + with_args, lengths, text)
    if not every_row:
        _add_flows(builder, chunk, a, b, np.flatnonzero(~is_row), track)


def _add_flows(builder: Builder, chunk: NativeEvents, a: int, b: int, at: np.ndarray,
               track: np.ndarray) -> None:  # fmt: skip
    """The run's flow points, keyed (category, id) in order of first appearance as
    ``FlowPoints.add`` keys them."""
    cols = chunk.cols
    strings = chunk.reader.scanner.strings
    cat = cols["cat"][a:b][at]
    ids = cols["id"][a:b][at]
    # one key per distinct (category, id), numbered in order of first appearance
    order = np.lexsort((np.arange(len(at)), ids, cat))
    new = np.ones(len(at), bool)
    new[1:] = (cat[order][1:] != cat[order][:-1]) | (ids[order][1:] != ids[order][:-1])
    group = np.cumsum(new) - 1
    first_at = order[new]  # each distinct pair's first point
    keys = builder.flows.keys
    cat_first, id_first = cat[first_at].tolist(), ids[first_at].tolist()
    by_first = np.argsort(first_at, kind="stable")
    key_of_group = np.empty(len(first_at), np.int64)
    for g in by_first.tolist():
        key_of_group[g] = keys.setdefault((strings[cat_first[g]], id_first[g]), len(keys))
    key = np.empty(len(at), np.int64)
    key[order] = key_of_group[group]
    phase = cols["cls"][a:b][at].astype(np.int64) - FLOW_S  # START, STEP, END
    enclosing = ((cols["flags"][a:b][at] & BP_E) != 0) | (phase != FLOW_F - FLOW_S)
    builder.flows.extend_keyed(key, phase, track[at], enclosing)
    f = cols["flags"][a:b][at]
    builder.flow_ts.extend(cols["ts_i"][a:b][at] if (f & TS_INT).all() else cols["ts_f"][a:b][at])


def _mapped(
    lut: np.ndarray, kids: np.ndarray, new_id: Callable[[int], int]
) -> tuple[np.ndarray, np.ndarray]:
    """``lut`` (grown as needed) and the builder's id of each kernel id in ``kids``; ids not
    met before get ``new_id(kernel id)``, called in order of first appearance."""
    if len(kids) and int(kids.max()) >= len(lut):
        grown = np.full(max(int(kids.max()) + 1, 2 * len(lut)), -1, np.int32)
        grown[: len(lut)] = lut
        lut = grown
    ids = lut[kids]
    missing = ids < 0
    if missing.any():
        new, first = np.unique(kids[missing], return_index=True)
        for k in new[np.argsort(first, kind="stable")].tolist():
            lut[k] = new_id(k)
        ids = lut[kids]
    return lut, ids
