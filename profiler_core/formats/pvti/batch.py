"""Turn the writer's flat in-memory event records into the packed columns of one batch row.

The hot path of an instrumented program only extends a flat list with one 8-tuple per
event; this module does the per-batch work off that path: interning strings to ids and
building numpy columns with C-level slicing and ``np.fromiter`` rather than a per-event
Python loop.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import repeat
from operator import is_not

import numpy as np

from profiler_core.formats.checksum import Digest, as_signed64
from profiler_core.formats.pvti.schema import EVENT_COLUMNS, EventKind

#: One event in the writer's flat record list:
#: (start_ns, end_ns, thread_key, channel, label, kind, depth, args_json_or_None).
#: thread_key is an OS thread id (int) or a track name (str) such as "IPU 0".
RECORD_FIELDS = 8


class Interner:
    """Assigns dense ids 0, 1, 2... to keys, remembering which ids are not yet written."""

    def __init__(self) -> None:
        self.ids: dict[Hashable, int] = {}
        self._unwritten: list[Hashable] = []

    def id(self, key: Hashable) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids)
            self._unwritten.append(key)
        return found

    def column(self, keys: Sequence[Hashable]) -> np.ndarray:
        """The int32 id of every key, interning new ones in order of first use (so the
        events of a batch's first part need only the first ids); C-level passes."""
        ids = self.ids
        for key in dict.fromkeys(keys):
            if key not in ids:
                self.id(key)
        return np.fromiter(map(ids.__getitem__, keys), np.int32, count=len(keys))

    def take_unwritten(self) -> list[tuple[int, Hashable]]:
        """New (id, key) pairs since the last call, in id order."""
        out = [(self.ids[k], k) for k in self._unwritten]
        self._unwritten = []
        return out


def columns_from_records(
    flat: list, threads: Interner, channels: Interner, labels: Interner
) -> tuple[dict[str, np.ndarray], dict[int, str]]:
    """Columns of the events in ``flat`` (RECORD_FIELDS items per event) and their args.

    Returns the columns keyed as in ``EVENT_COLUMNS`` and ``{index in batch: args JSON}``
    for the few events that carry args.
    """
    n = len(flat) // RECORD_FIELDS
    f = RECORD_FIELDS
    cols = {
        "start_ns": np.fromiter(flat[0::f], np.int64, count=n),
        "end_ns": np.fromiter(flat[1::f], np.int64, count=n),
        "thread": threads.column(flat[2::f]),
        "channel": channels.column(flat[3::f]),
        "label": labels.column(flat[4::f]),
        "kind": np.fromiter(flat[5::f], np.uint8, count=n),
        "depth": np.fromiter(flat[6::f], np.int32, count=n),
    }
    args_col = flat[7::f]
    has_args = np.fromiter(map(is_not, args_col, repeat(None)), bool, count=n)
    args = {int(i): args_col[i] for i in np.flatnonzero(has_args)}
    return cols, args


def span_keys(flat: list) -> list[tuple]:
    """(thread_key, channel, label, start_ns, depth) of every span in ``flat``."""
    f = RECORD_FIELDS
    return [
        (flat[i + 2], flat[i + 3], flat[i + 4], flat[i], flat[i + 6])
        for i in range(0, len(flat) - f + 1, f)
        if flat[i + 5] == EventKind.SPAN
    ]


def pack_batch(cols: dict[str, np.ndarray]) -> tuple[int | bytes, ...]:
    """The ``event_batches`` row values for ``cols``: (n, blob, blob, ..., checksum)."""
    n = len(cols["start_ns"])
    blobs = tuple(
        np.ascontiguousarray(cols[name], dtype=np.dtype(dt)).tobytes()
        for name, dt in EVENT_COLUMNS.items()
    )
    return (n, *blobs, batch_checksum(n, blobs))


def batch_checksum(n: int, blobs: Sequence[bytes]) -> int:
    """CRC-32 of a batch row (as SQLite's signed INTEGER): its event count and its column
    blobs in ``EVENT_COLUMNS`` order (format 1.2), so a batch changed after writing is
    skipped, not shown."""
    digest = Digest()
    digest.integer(n)
    for blob in blobs:
        digest.raw(blob)
    return as_signed64(digest.value)


def split_columns(cols: dict[str, np.ndarray], size: int) -> list[dict[str, np.ndarray]]:
    """``cols`` cut into pieces of at most ``size`` events (views, no copies)."""
    n = len(cols["start_ns"])
    return [{k: v[i : i + size] for k, v in cols.items()} for i in range(0, n, size)] or []


def drop_completed_spans(open_rows: list[tuple], cols: dict[str, np.ndarray]) -> list[tuple]:
    """Drop open spans that this very batch also holds as finished.

    A span that ends while a commit is being prepared can be both on its thread's stack
    (snapshot) and among the taken records; the finished record wins.
    """
    spans = cols["kind"] == EventKind.SPAN
    starts = np.array([row[3] for row in open_rows], dtype=np.int64)
    maybe = np.isin(starts, cols["start_ns"][spans])
    kept = []
    for row, suspect in zip(open_rows, maybe, strict=True):
        if suspect:
            thread, _, _, start, depth, _ = row
            same = spans & (cols["start_ns"] == start) & (cols["thread"] == thread)
            if (same & (cols["depth"] == depth)).any():
                continue
        kept.append(row)
    return kept
