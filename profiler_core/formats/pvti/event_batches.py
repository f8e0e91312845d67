"""Read ``event_batches`` rows into event columns allocated once, filled batch by batch.

A 10M-event trace must load in little more memory than its columns: the batches' counts
are read first (their ``n`` and blob lengths, without the blobs), the columns are allocated
once, and each batch row is fetched alone and copied into place, so at most one batch's
blobs exist beside the columns. A truncated file is salvaged: each batch is read by id on
its own and the ones whose pages are missing are skipped and counted. Since format 1.2 a
batch whose CRC-32 (``checksum``) does not match its count and columns is skipped and counted
the same way (``BatchPlan.damaged``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from profiler_core.formats.pvti.batch import batch_checksum
from profiler_core.formats.pvti.schema import EVENT_COLUMNS, EventKind

_NAMES = list(EVENT_COLUMNS)
_SELECT = f"SELECT n, {', '.join(_NAMES)} FROM event_batches WHERE id = ?"
_SELECT_CHECKED = f"SELECT n, {', '.join(_NAMES)}, checksum FROM event_batches WHERE id = ?"
#: Probing for salvaged batch ids stops after this many ids in a row could not be read.
SALVAGE_PROBE_GAP = 1024
#: A salvaged batch may name dictionary ids this far past the rows that survived.
SALVAGE_MAX_ID = 1 << 24


@dataclass
class BatchPlan:
    """Which batch rows to read, in order: their ids and event counts."""

    ids: list[int] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    lost: list[int] = field(default_factory=list)  # ids that could not be read (salvage)
    end_unknown: bool = False  # salvage: the table's last page is gone, so later ids may be
    checksummed: bool = False  # rows carry a checksum (format 1.2): ``fill`` checks each
    damaged: list[int] = field(default_factory=list)  # ids that failed their checksum

    @property
    def total(self) -> int:
        return sum(self.counts)


def plan_batches(
    conn: sqlite3.Connection,
    after: int,
    dtypes: dict[str, np.dtype],
    expect: Callable[[bool, str], None],
) -> BatchPlan:
    """The batches with ids above ``after``, checked by their counts and blob lengths."""
    lengths = ", ".join(f"length({name}), typeof({name})" for name in _NAMES)
    plan = BatchPlan(checksummed=has_checksums(conn))
    for batch_id, n, *blobs in conn.execute(
        f"SELECT id, n, {lengths} FROM event_batches WHERE id > ? ORDER BY id", (after,)
    ):
        if plan.checksummed and not _sizes_agree(n, blobs, dtypes):
            plan.damaged.append(batch_id)  # a count or column changed after writing
            continue
        expect(isinstance(n, int) and n >= 0, f"event batch {batch_id} count {n!r}")
        for i, name in enumerate(_NAMES):
            size, kind = blobs[2 * i], blobs[2 * i + 1]
            expect(
                kind == "blob" and size == n * dtypes[name].itemsize,
                f"event batch {batch_id}: column {name} is not {n} x {dtypes[name].itemsize} bytes",
            )
        plan.ids.append(batch_id)
        plan.counts.append(n)
    return plan


def _sizes_agree(n: object, sizes: list, dtypes: dict[str, np.dtype]) -> bool:
    """Whether every column of a batch is a blob of ``n`` values (``sizes``: (length,
    type) of each column, in order)."""
    if not isinstance(n, int) or n < 0:
        return False
    return all(
        sizes[2 * i + 1] == "blob" and sizes[2 * i] == n * dtypes[name].itemsize
        for i, name in enumerate(_NAMES)
    )


def has_checksums(conn: sqlite3.Connection) -> bool:
    """Whether the file's batch rows carry a checksum column (written by format 1.2 and later)."""
    try:
        return any(row[1] == "checksum" for row in conn.execute("PRAGMA table_info(event_batches)"))
    except sqlite3.DatabaseError:
        return False


def salvage_plan(conn: sqlite3.Connection, after: int, dtypes: dict[str, np.dtype]) -> BatchPlan:
    """The batches above ``after`` of a truncated file that read whole and make sense.

    Each id is read on its own (a missing page fails that batch only). Ids run up to the
    table's last id when its last page is present, else until SALVAGE_PROBE_GAP ids in a
    row fail.
    """
    try:
        last = conn.execute("SELECT max(id) FROM event_batches").fetchone()[0]
    except sqlite3.DatabaseError:
        last = None
    plan = BatchPlan(checksummed=has_checksums(conn))
    batch_id, misses = after + 1, 0
    while (batch_id <= last) if isinstance(last, int) else misses < SALVAGE_PROBE_GAP:
        columns = _read_whole(conn, batch_id, dtypes)
        if columns is None:
            plan.lost.append(batch_id)
            misses += 1
        else:
            plan.ids.append(batch_id)
            plan.counts.append(len(columns["start_ns"]))
            misses = 0
        batch_id += 1
    if not isinstance(last, int):  # the trailing failed probes may be past the end
        plan.lost = [i for i in plan.lost if plan.ids and i < plan.ids[-1]]
        plan.end_unknown = True
    return plan


def _read_whole(
    conn: sqlite3.Connection, batch_id: int, dtypes: dict[str, np.dtype]
) -> dict[str, np.ndarray] | None:
    """Batch ``batch_id``'s columns, or None when it is missing, damaged or nonsense."""
    try:
        row = conn.execute(_SELECT, (batch_id,)).fetchone()
    except sqlite3.DatabaseError:
        return None
    if row is None or not isinstance(row[0], int) or row[0] < 0:
        return None
    n = row[0]
    columns = {}
    for name, blob in zip(_NAMES, row[1:], strict=True):
        if not isinstance(blob, bytes) or len(blob) != n * dtypes[name].itemsize:
            return None
        columns[name] = np.frombuffer(blob, dtypes[name])
    if n and not _plausible(columns):
        return None
    return columns


def _plausible(c: dict[str, np.ndarray]) -> bool:
    ids_ok = all(c[k].min() >= 0 and c[k].max() < SALVAGE_MAX_ID for k in ("thread", "label"))
    return bool(
        ids_ok
        and c["channel"].min() >= 0
        and c["channel"].max() < SALVAGE_MAX_ID
        and c["depth"].min() >= 0
        and np.isin(c["kind"], [EventKind.SPAN, EventKind.INSTANT]).all()
        and (c["end_ns"] >= c["start_ns"]).all()
    )


def allocate(size: int) -> dict[str, np.ndarray]:
    """Empty event columns of ``size`` events in the model's dtypes."""
    return {name: np.empty(size, np.dtype(dt)) for name, dt in EVENT_COLUMNS.items()}


def fill(
    conn: sqlite3.Connection,
    plan: BatchPlan,
    out: dict[str, np.ndarray],
    dtypes: dict[str, np.dtype],
    expect: Callable[[bool, str], None],
) -> list[int]:
    """Copy the planned batches into ``out`` in order; returns each batch's first index.

    A batch failing its checksum is left out: it moves from ``plan.ids`` to ``plan.damaged``,
    and ``out``'s columns are cut short by its events (the space at their end is unused).
    """
    starts, kept = [], []
    position = 0
    select = _SELECT_CHECKED if plan.checksummed else _SELECT
    for batch_id, n in zip(plan.ids, plan.counts, strict=True):
        row = conn.execute(select, (batch_id,)).fetchone()
        expect(row is not None and row[0] == n, f"event batch {batch_id} changed while read")
        blobs = row[1 : 1 + len(_NAMES)]
        for name, blob in zip(_NAMES, blobs, strict=True):
            expect(
                isinstance(blob, bytes) and len(blob) == n * dtypes[name].itemsize,
                f"event batch {batch_id}: column {name} is not {n} x {dtypes[name].itemsize} bytes",
            )
        if plan.checksummed and row[-1] != batch_checksum(n, blobs):
            plan.damaged.append(batch_id)
            continue
        for name, blob in zip(_NAMES, blobs, strict=True):
            # Assignment converts a narrower stored dtype to the model's in place.
            out[name][position : position + n] = np.frombuffer(blob, dtypes[name])
        starts.append(position)
        kept.append((batch_id, n))
        position += n
    if plan.damaged:
        unused = plan.total - position
        plan.ids, plan.counts = [b for b, _ in kept], [n for _, n in kept]
        for name, column in out.items():
            out[name] = column[: len(column) - unused]
    return starts
