"""Event columns of a Chrome trace import, grown a row or a chunk at a time and kept as
numpy chunks: 10M events cost their columns' bytes, not 10M Python floats per field; then
made relative ns and sorted where they are.

Time stamps are kept as written: int64 while every stamp is an integer (nanosecond epochs
keep every digit), float64 as soon as one is not -- the same rule whether a stamp came
one row at a time or in a chunk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.heap import release_free_memory
from profiler_core.trace.event_args import EventArgs
from profiler_core.trace.nesting import walk_order


def stamps(values: list[int | float]) -> np.ndarray:
    """Time stamps as written: int64 when every one is an integer (exact), else float64."""
    if all(type(v) is int for v in values):
        return np.array(values, np.int64)
    return np.array(values, np.float64)


class Column:
    """One event field: rows appended one by one (``append``) or a chunk at a time
    (``extend``), in row order. ``dtype`` None means time stamps (see ``stamps``)."""

    def __init__(self, dtype: Any = None) -> None:
        self.dtype = dtype
        self.parts: list[np.ndarray] = []
        self.pending: list[Any] = []
        self.append = self.pending.append  # the per-event path's one call per field
        self._n = 0
        # small chunks (a few thousand rows each) joined into parts of _PART_ROWS: fewer
        # parts to walk when the column is joined; before any row appended since
        self.staged: list[np.ndarray] = []
        self._staged_n = 0

    def _flush(self) -> None:
        self._join_staged()
        if self.pending:
            values = self.pending
            part = stamps(values) if self.dtype is None else np.array(values, self.dtype)
            self.parts.append(part)
            self._n += len(values)
            values.clear()  # the same list: ``append`` stays bound to it

    def extend(self, part: np.ndarray) -> None:
        if self.pending:
            self._flush()
        if not len(part):
            return
        if self.staged and self.staged[0].dtype != part.dtype:  # never promoted here
            self._join_staged()
        self.staged.append(part)
        self._staged_n += len(part)
        self._n += len(part)
        if self._staged_n >= _PART_ROWS:
            self._join_staged()

    def _join_staged(self) -> None:
        if self.staged:
            staged = self.staged
            self.parts.append(staged[0] if len(staged) == 1 else np.concatenate(staged))
            self.staged, self._staged_n = [], 0

    def __len__(self) -> int:
        return self._n + len(self.pending)

    def array(self) -> np.ndarray:
        """The whole column (float64 if any stamp chunk was); the chunks are let go."""
        return self._joined(lambda part: part)

    def relative_ns(self, base: int | float, scale: int) -> np.ndarray:
        """The whole column as ns from ``base`` (``relative_ns`` of ``array()``, element for
        element), made a chunk at a time: no joined copy of the stamps as written."""
        dtype = self.dtype_joined()
        return self._joined(
            lambda part: relative_ns(part.astype(dtype, copy=False), base, scale), np.int64
        )

    def looked_up(self, table: np.ndarray) -> np.ndarray:
        """``table[array()]`` (ids renumbered), made a chunk at a time."""
        return self._joined(lambda part: table[part], table.dtype)

    def _joined(self, convert: Any, dtype: Any = None) -> np.ndarray:
        """``convert(chunk)`` of every chunk, in one array; each chunk is let go once copied
        and the heap handed back every ``_RELEASE_BYTES`` or so, so joining costs the
        column once (not its chunks and the joined copy side by side)."""
        self._flush()
        parts, self.parts = self.parts, []
        if not parts:
            return np.zeros(0, np.int64 if self.dtype is None else self.dtype)
        if len(parts) == 1:
            return convert(parts[0])
        out = np.empty(sum(map(len, parts)), dtype or np.result_type(*parts))
        parts.reverse()  # popped from the end: the first chunk first
        at = freed = 0
        while parts:
            part = parts.pop()
            out[at : at + len(part)] = convert(part)
            at += len(part)
            freed += part.nbytes
            del part
            if freed >= _RELEASE_BYTES:
                release_free_memory()
                freed = 0
        return out

    def dtype_joined(self) -> np.dtype:
        """The dtype of ``array()``."""
        self._flush()
        if not self.parts:
            return np.dtype(np.int64 if self.dtype is None else self.dtype)
        return np.result_type(*self.parts)

    def lowest(self) -> Any:
        """The smallest value as ``array().min()`` gives it (of the joined dtype)."""
        self._flush()
        lows = [p.min() for p in self.parts if len(p)]
        return np.array(lows).astype(self.dtype_joined()).min()

    def highest_abs(self) -> Any:
        """``abs(array()).max()``, from the chunks."""
        self._flush()
        dtype = self.dtype_joined()
        ends = [x for p in self.parts if len(p) for x in (p.min(), p.max())]
        return abs(np.array(ends).astype(dtype)).max()

    def max(self) -> int | float | None:
        """The largest value (as a Python number), None when empty."""
        self._join_staged()
        highs = [p.max().item() for p in self.parts if len(p)]
        if self.pending:
            highs.append(max(self.pending))
        return max(highs) if highs else None


#: rows of a part made of small chunks (``Column.extend``)
_PART_ROWS = 1 << 16
#: chunk bytes let go between hand-backs of the heap while a column is joined
_RELEASE_BYTES = 32 << 20


class ArgsText:
    """Events' args as compact JSON text, a chunk at a time: one string per chunk (with
    each event's length) while reading, the per-event strings made only at the end -- so
    a million small strings are not scattered among the parsed chunks' freed objects,
    where they would keep that memory from being reused."""

    def __init__(self) -> None:
        self.chunks: list[tuple[np.ndarray, np.ndarray, str]] = []  # events, lengths, text
        self.raw: list[tuple[np.ndarray, np.ndarray, bytes]] = []  # as the file wrote them

    def add(self, events: np.ndarray, texts: list[str]) -> None:
        if texts:
            lengths = np.fromiter(map(len, texts), np.int64, len(texts))
            self.chunks.append((events, lengths, "".join(texts)))

    def add_raw(self, events: np.ndarray, lengths: np.ndarray, text: bytes) -> None:
        """Args objects as the file wrote them (JSON bytes), each made compact text only
        when it is read (``EventArgs``)."""
        if len(events):
            self.raw.append((events, lengths, text))

    def into(self, out: dict[int, str], moved: np.ndarray | None = None) -> EventArgs:
        """Every chunk's texts and ``out``'s (the per-event path's) by event index
        (``moved[index]`` when the events were sorted since), kept joined; the chunks let
        go."""
        chunks, self.chunks = self.chunks, []
        raw, self.raw = self.raw, []
        if out:
            texts = list(out.values())
            events = np.fromiter(out, np.int64, len(out))
            chunks.append((events, np.fromiter(map(len, texts), np.int64, len(texts)),
                           "".join(texts)))  # fmt: skip
            out.clear()
        if moved is not None:
            chunks = [(moved[events], lengths, text) for events, lengths, text in chunks]
            raw = [(moved[events], lengths, text) for events, lengths, text in raw]
        return EventArgs.joined(chunks, raw)


def relative_ns(stamps: np.ndarray, base: int | float, scale: int) -> np.ndarray:
    """``stamps`` (which this changes: the caller lets them go) as ns from ``base``."""
    if stamps.dtype == np.int64 and isinstance(base, int | np.integer):
        stamps -= int(base)
        stamps *= scale
        return stamps
    x = stamps.astype(np.float64, copy=False)
    x -= base
    x *= scale
    np.round(x, out=x)
    return x.astype(np.int64)


def sort_in_walk_order(cols: dict[str, np.ndarray]) -> np.ndarray | None:
    """Sort ``cols`` by (thread, start, longest first) where they are; where each event
    went (None when they were in that order already)."""
    thread, start, end = cols["thread"], cols["start_ns"], cols["end_ns"]
    n = len(thread)
    if n < 2:
        return None
    order = walk_order(thread, start, end, negate_end=True)  # the columns are ours
    if (order[1:] > order[:-1]).all():
        return None
    for column in cols.values():
        column[...] = column[order]  # one column-sized temporary at a time
    moved = np.empty(n, order.dtype)
    moved[order] = np.arange(n, dtype=order.dtype)
    return moved
