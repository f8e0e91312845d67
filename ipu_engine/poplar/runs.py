"""Runs: element addresses as intervals ``[start, start + length)`` of a pool.

Poplar keeps tensors and edges as regions of variables, so a graph costs memory per
region, not per element. An edge whose addresses are a few contiguous runs is stored as
those runs; per-element addresses are made only while an operation needs them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Keep addresses instead of runs when runs would save less than this factor.
_RUNS_WORTHWHILE = 4


@dataclass(frozen=True)
class Runs:
    """Contiguous runs of pool addresses, in order: the run form of an address list."""

    start: np.ndarray  # int64 first address of each run
    length: np.ndarray  # int64 elements in each run

    @property
    def size(self) -> int:
        return int(self.length.sum())

    def __len__(self) -> int:
        return int(self.start.size)

    def addresses(self) -> np.ndarray:
        """The element addresses, one per element (made on demand; do not keep them)."""
        return expand(self.start, self.length)

    def element_offsets(self) -> np.ndarray:
        """Where each run starts among the elements, plus the end (len + 1 values)."""
        out = np.zeros(self.start.size + 1, dtype=np.int64)
        np.cumsum(self.length, out=out[1:])
        return out


def runs_of(addr: np.ndarray) -> Runs:
    """The maximal contiguous runs of an address list (any shape, row-major order)."""
    flat = np.asarray(addr).reshape(-1)
    if flat.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return Runs(z, z)
    breaks = np.flatnonzero(np.diff(flat) != 1) + 1
    first = np.concatenate(([0], breaks))
    length = np.diff(np.concatenate((first, [flat.size])))
    return Runs(flat[first].astype(np.int64), length.astype(np.int64))


def block_runs(addr: np.ndarray) -> Runs:
    """Runs of an N-d address view, checked row by row: a sub-block of a row-major
    variable gives one run per row (fewer where rows continue each other)."""
    arr = np.asarray(addr)
    if arr.ndim >= 2 and arr.size:
        rows = arr.reshape(-1, arr.shape[-1])
        if _rows_contiguous(rows):
            n = rows.shape[1]
            return merge_adjacent(rows[:, 0].astype(np.int64), np.full(rows.shape[0], n))
    return runs_of(arr)


def _rows_contiguous(rows: np.ndarray) -> bool:
    n = rows.shape[1]
    if n == 1:
        return True
    # cheap necessary test first, then the exact one
    if not np.array_equal(rows[:, -1] - rows[:, 0], np.full(rows.shape[0], n - 1)):
        return False
    return bool((np.diff(rows, axis=1) == 1).all())


def merge_adjacent(start: np.ndarray | Runs, length: np.ndarray | None = None) -> Runs:
    """Join runs that continue each other (a whole-row block is one run)."""
    if isinstance(start, Runs):
        start, length = start.start, start.length
    keep = length > 0
    if not keep.all():
        start, length = start[keep], length[keep]
    if start.size <= 1:
        return Runs(start, length.astype(np.int64))
    joins = start[1:] != start[:-1] + length[:-1]
    if joins.all():  # nothing continues: the same runs, not a copy of them
        return Runs(start, length if length.dtype == np.int64 else length.astype(np.int64))
    first = np.concatenate(([0], np.flatnonzero(joins) + 1))
    total = np.add.reduceat(length.astype(np.int64), first)
    return Runs(start[first], total)


def expand(start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Per-element addresses of runs (int64)."""
    length = np.asarray(length, dtype=np.int64)
    total = int(length.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    n = int(length[0])
    # runs of one length (blocks of a matrix): one pass
    if total == n * length.size and (length == n).all():
        starts = np.asarray(start, dtype=np.int64)
        return (starts[:, None] + np.arange(n, dtype=np.int64)).reshape(-1)
    first = np.zeros(length.size, dtype=np.int64)
    np.cumsum(length[:-1], out=first[1:])
    out = np.ones(total, dtype=np.int64)
    nonempty = length > 0
    starts = np.asarray(start, dtype=np.int64)[nonempty]
    pos = first[nonempty]
    out[pos[0]] = starts[0]
    # each run's first element jumps from the previous run's last address
    prev_last = starts[:-1] + length[nonempty][:-1] - 1
    out[pos[1:]] = starts[1:] - prev_last
    return np.cumsum(out)


def narrow(values: np.ndarray) -> np.ndarray:
    """int64 ``values`` as int32 when every one fits, else as they are: what a compiled
    graph keeps of its edges (addresses, runs) is half the size."""
    if values.dtype != np.int64 or values.size == 0:
        return values
    limits = np.iinfo(np.int32)
    if values.min() < limits.min or values.max() > limits.max:
        return values
    return values.astype(np.int32)


def narrowed(runs: Runs) -> Runs:
    """``runs`` with int32 starts and lengths when they fit, ends included (a run's end,
    start + length, is computed in their dtype)."""
    if len(runs) == 0:
        return runs
    if int(runs.start.max()) + int(runs.length.max()) > np.iinfo(np.int32).max:
        return runs
    return Runs(narrow(runs.start), narrow(runs.length))


def worth_runs(num_runs: int, num_elements: int) -> bool:
    """Whether runs are cheaper to keep than per-element addresses."""
    return num_runs * _RUNS_WORTHWHILE <= num_elements
