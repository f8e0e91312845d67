"""The tracepoints' record ring: a preallocated buffer of fixed-size event records that the
hot path fills in C (``_ring.c``, ``_ring.h``: a few stores per event, no Python object), and
that a commit takes as numpy columns -- no Python object is kept per event, on either side.

A record is 64 bytes: (start_ns, end_ns, OS thread id, sequence, point, depth). A point is a
(channel, label) pair numbered once per process (``POINTS``), times two, plus one for an
instant; so a Tracepoint knows its number from its creation on, whatever writer is
current, and a commit maps the numbers to the writer's own channel and label ids. A slot is
claimed by advancing the ring's C counter of byte offsets (under the GIL) and its record
carries that offset + 1 as its sequence, written last, so a commit takes exactly the records
written, in order, and stops at a slot claimed but not yet filled. A thread whose record
passes ``limit_at`` (the ring nearly full of records not yet taken) commits them itself
(``relieve``), so records are never overwritten before they are taken.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from profiler_core.formats.pvti.schema import EventKind
from profiler_core.native import native_module

_ring = native_module("profiler_core.formats.pvti._ring", "the .pvti record ring is a C module")
RECORD_SIZE, RingBase = _ring.RECORD_SIZE, _ring.RingBase

#: One record, as ``pack_into`` writes it and numpy reads it back (a power of two bytes, so
#: a claimed byte offset is made a slot's with one ``&``).
RECORD = struct.Struct("<qqqqii24x")
RECORD_DTYPE = np.dtype(
    {"names": ["start_ns", "end_ns", "tid", "seq", "point", "depth"],
     "formats": ["<i8", "<i8", "<i8", "<i8", "<i4", "<i4"],
     "offsets": [0, 8, 16, 24, 32, 36], "itemsize": 64}
)  # fmt: skip
assert RECORD_DTYPE.itemsize == RECORD.size == RECORD_SIZE == 64
#: records in a ring (2 MiB)
CAPACITY = 1 << 15
#: a claimed byte offset's place in the ring: ``offset & OFFSET_MASK``
OFFSET_MASK = CAPACITY * RECORD.size - 1
#: slots kept free below a full ring: each recording thread may write one record past
#: ``limit_at`` before it commits (or waits for the commit under way)
_MARGIN = 4096


class NameTable:
    """Process-wide ids of keys, in order of first use; a key keeps its id for the life of
    the process. Interning is locked, lookups (``names[i]``) not."""

    def __init__(self) -> None:
        self.ids: dict[Hashable, int] = {}
        self.names: list[Any] = []
        self._lock = threading.Lock()

    def id(self, name: Hashable) -> int:
        found = self.ids.get(name)
        if found is None:
            with self._lock:
                found = self.ids.get(name)
                if found is None:
                    found = self.ids[name] = len(self.names)
                    self.names.append(name)
        return found


#: (channel, label) -> point number; ``POINTS.names[p]`` is the pair
POINTS = NameTable()
SPAN_BIT, INSTANT_BIT = 0, 1  # a record's point is 2 * POINTS id + this


class RecordRing(RingBase):
    """CAPACITY records of RECORD; see the module docstring. ``max_pending`` records
    written and not taken make the next record's thread commit them (``relieve``). The C
    base holds ``buf``, ``claimed``, ``limit_at``, ``relieve`` and ``put``."""

    __slots__ = ("limit", "read")

    def __init__(self, max_pending: int, relieve: Callable[[], None]) -> None:
        super().__init__(CAPACITY * RECORD.size, relieve)
        self.read = 0  # the byte offset of the first record not taken
        self.limit = min(max(int(max_pending), 1), CAPACITY - _MARGIN) * RECORD.size
        self.limit_at = self.limit  # a record claimed at this offset or later relieves

    def _valid(self) -> np.ndarray:
        """The records written since ``read``, in order, copied out (the copy holds the GIL
        throughout: no record is read half written)."""
        first = (self.read & OFFSET_MASK) // RECORD.size
        # How far: the sequence numbers read in place (they may change meanwhile), a
        # window growing fourfold while every slot in it is filled, ...
        seq = np.frombuffer(self.buf, np.int64)[3 :: RECORD.size // 8]
        n, window = 0, 1024
        while n < CAPACITY:
            at = (first + n + np.arange(min(window, CAPACITY - n))) & (CAPACITY - 1)
            got = _prefix(seq[at], self.read + n * RECORD.size)
            n += got
            if got < len(at):
                break
            window *= 4
        del seq
        # ... then the records copied out and checked again (the copy holds the GIL).
        end = first + n
        view = memoryview(self.buf)
        taken = view[first * RECORD.size : min(end, CAPACITY) * RECORD.size]
        if end > CAPACITY:  # wrapped round: the tail joined on (one copy either way)
            copied = b"".join((taken, view[: (end - CAPACITY) * RECORD.size]))
        else:
            copied = taken.tobytes()
        records = np.frombuffer(copied, RECORD_DTYPE)
        return records[: _prefix(records["seq"], self.read)]

    def take(self) -> np.ndarray:
        """The records written since the last take, in order; they are let go."""
        got = self._valid()
        self.read += len(got) * RECORD.size
        self.limit_at = self.read + self.limit
        return got

    def peek(self) -> np.ndarray:
        """The records written since the last take, kept for the next one."""
        return self._valid()

    def __len__(self) -> int:
        """Records waiting to be taken (written or claimed)."""
        return len(self._valid())


def _prefix(seq: np.ndarray, read: int) -> int:
    """How many of ``seq`` (the sequence numbers of the slots from offset ``read`` on, in
    order) are the records written since: seq == offset + 1 up to the first that is not."""
    expected = read + 1 + RECORD.size * np.arange(len(seq), dtype=np.int64)
    ok = seq == expected
    return len(seq) if ok.all() else int(np.argmin(ok))


def ring_columns(records: np.ndarray, threads: object, channels: object,
                 labels: object) -> dict[str, np.ndarray]:  # fmt: skip
    """A batch's columns (schema names) of ring ``records``: thread ids, channels and labels
    renumbered to the writer's interners (``Interner.id``), one call per distinct value."""
    point = records["point"] >> 1
    instant = (records["point"] & 1).astype(bool)
    return {
        "start_ns": records["start_ns"].copy(),
        "end_ns": records["end_ns"].copy(),
        "thread": _renumbered(records["tid"], lambda t: threads.id(t)),
        "channel": _renumbered(point, lambda p: channels.id(POINTS.names[p][0])),
        "label": _renumbered(point, lambda p: labels.id(POINTS.names[p][1])),
        "kind": np.where(instant, EventKind.INSTANT, EventKind.SPAN).astype(np.uint8),
        "depth": records["depth"].astype(np.int32),
    }


def _renumbered(values: np.ndarray, new_id: Callable[[int], int]) -> np.ndarray:
    """``new_id`` of each value, called once per distinct value in order of first use (as
    the writer's interners number the list records' keys)."""
    if len(values) and (values == values[0]).all():  # one thread, one point: no sort
        return np.full(len(values), new_id(int(values[0])), np.int32)
    unique, first, at = np.unique(values, return_index=True, return_inverse=True)
    ids = np.zeros(len(unique), np.int32)
    for k in np.argsort(first, kind="stable").tolist():
        ids[k] = new_id(int(unique[k]))
    return ids[at.reshape(-1)]


def ring_span_keys(records: np.ndarray) -> list[tuple]:
    """(thread, channel, label, start_ns, depth) of the spans among ``records`` (few: the
    records that came while a commit was being prepared)."""
    spans = records[(records["point"] & 1) == SPAN_BIT]
    return [
        (int(r["tid"]), *POINTS.names[int(r["point"]) >> 1], int(r["start_ns"]), int(r["depth"]))
        for r in spans
    ]
