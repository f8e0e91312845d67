"""Edges of a group of alike vertices read or written straight from their runs in memory.

A batched codelet that works group by group (vertices of equal sizes) need not gather
every vertex's data at once (``batch[name]`` expands every run into one address per
element, each run): when each vertex of a group has the same number of equally long runs,
the group's elements are ``first + arange(length)`` of its runs. Vertices reading the same
elements (a convolution's output-channel blocks share their input rows) read them once.
The index work that depends on the graph alone is kept in ``batch.cache``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.arrays import memory_view
from ipu_engine.poplar.vertex import VertexBatch


@dataclass(frozen=True)
class GroupRuns:
    """The runs of one field for a group of vertices: distinct edges and who reads which."""

    starts: np.ndarray  # [distinct edges, runs per edge] first address of each run
    length: int  # elements per run
    inverse: np.ndarray | None  # distinct edge of each vertex; None: each its own, in order

    @property
    def count(self) -> int:
        return self.starts.shape[0] if self.inverse is None else self.inverse.size

    def addresses(self) -> np.ndarray:
        """[distinct edges, elements per edge] addresses, made for one read or write."""
        idx = self.starts[:, :, None] + np.arange(self.length, dtype=np.int64)
        return idx.reshape(self.starts.shape[0], -1)


def alike_vertices(
    batch: VertexBatch, names: tuple[str, ...]
) -> list[tuple[dict[str, int], np.ndarray]]:
    """Vertices of equal state fields ``names`` (so of equal sizes), each group as its
    state and its vertices, found once per compiled compute set."""
    key = ("alike", names)
    if key not in batch.cache:
        table = np.stack([batch.state(k).astype(np.int64) for k in names], axis=1)
        unique, inverse = np.unique(table, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        batch.cache[key] = [
            (dict(zip(names, row, strict=True)), np.flatnonzero(inverse == u))
            for u, row in enumerate(unique.tolist())
        ]
    return batch.cache[key]


#: Selections whose digest is remembered per compute set: more are forgotten at once.
MAX_REMEMBERED_SELECTIONS = 1024


def selection_key(batch: VertexBatch, sel: np.ndarray) -> bytes:
    """A ``batch.cache`` key for the vertices ``sel``: a digest of its indices, made once
    per array (the groups of ``alike_vertices`` are the same arrays every run) instead of
    hashing the indices again at every lookup of every run."""
    memo = batch.cache.setdefault("selection_digests", {})
    found = memo.get(id(sel))
    if found is not None and found[0] is sel:  # the array itself, kept alive by the memo
        return found[1]
    if len(memo) >= MAX_REMEMBERED_SELECTIONS:
        memo.clear()
    digest = hashlib.blake2b(sel.tobytes(), digest_size=16).digest()
    memo[id(sel)] = (sel, digest)
    return digest


def group_runs(batch: VertexBatch, name: str, sel: np.ndarray, size: int) -> GroupRuns | None:
    """Field ``name`` of vertices ``sel`` (each ``size`` elements) as uniform runs, found
    once per compiled compute set; None when the field is not kept as runs or the group's
    runs differ in number or length."""
    key = ("group_runs", name, size, selection_key(batch, sel))
    if key not in batch.cache:
        batch.cache[key] = _find(batch, name, sel, size)
    return batch.cache[key]


def _find(batch: VertexBatch, name: str, sel: np.ndarray, size: int) -> GroupRuns | None:
    runs = batch.edge_runs(name)
    if runs is None or sel.size == 0:
        return None
    start, length, run_offsets = runs
    first = run_offsets[sel]
    counts = run_offsets[sel + 1] - first
    k = int(counts[0])
    if k == 0 or not (counts == k).all():
        return None
    which = first[:, None] + np.arange(k)
    lengths = length[which]
    n = int(lengths[0, 0])
    if n * k != size or not (lengths == n).all():
        return None
    starts = start[which]
    distinct, inverse = np.unique(starts, axis=0, return_inverse=True)
    if distinct.shape[0] == sel.size:  # each its own (in any order)
        return GroupRuns(starts, n, None)
    return GroupRuns(distinct, n, inverse.reshape(-1))


def read_group(batch: VertexBatch, name: str, sel: np.ndarray, size: int) -> np.ndarray:
    """[vertices, size] values of field ``name`` of vertices ``sel``: each distinct edge
    read once from memory when the group's edges are uniform runs, else sliced out of
    ``batch[name]``."""
    found = group_runs(batch, name, sel, size)
    if found is None:
        values = batch[name]
        starts = batch.offsets(name)[:-1][sel]
        if starts.size > 1 and np.all(np.diff(starts) == size):  # one slice when evenly spaced
            first = int(starts[0])
            return values[first : first + size * starts.size].reshape(starts.size, size)
        return values[starts[:, None] + np.arange(size)]
    values = batch.pool(name)[found.addresses()]
    return values if found.inverse is None else values[found.inverse]


def writes_in_place(batch: VertexBatch, name: str, groups: list[tuple[np.ndarray, int]]) -> bool:
    """Whether output ``name`` of every group (vertices, elements each) is uniform runs,
    each vertex its own, so that ``write_group`` writes memory directly. All or none:
    a direct write must not be overwritten by ``batch[name]`` stored back afterwards."""
    for sel, size in groups:
        found = group_runs(batch, name, sel, size)
        if found is None or found.inverse is not None:
            return False
    return True


def write_group(
    batch: VertexBatch, name: str, sel: np.ndarray, values: np.ndarray, in_place: bool
) -> None:
    """Write [vertices, size] ``values`` to output ``name`` of vertices ``sel``: straight
    into memory when ``in_place`` (see ``writes_in_place``), else into ``batch[name]``."""
    size = values.shape[1]
    if in_place:
        found = group_runs(batch, name, sel, size)
        assert found is not None
        batch.pool(name)[found.addresses()] = values
        return
    index = batch.offsets(name)[:-1][sel, None] + np.arange(size)
    batch[name][index] = values


def affine_steps(starts: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
    """(first, step per axis) when ``starts[i, j, ...] == first + i * step_0 + j * step_1
    + ...`` with no step negative: runs that a strided view of memory reads as they are."""
    if starts.size == 0:
        return None
    first = int(starts.flat[0])
    expected = np.full(starts.shape, first, dtype=np.int64)
    steps = []
    for axis, n in enumerate(starts.shape):
        step = 0
        if n > 1:
            index = [0] * starts.ndim
            index[axis] = 1
            step = int(starts[tuple(index)]) - first
        steps.append(step)
        shape = [1] * starts.ndim
        shape[axis] = n
        expected = expected + np.arange(n, dtype=np.int64).reshape(shape) * step
    if min(steps) < 0 or not np.array_equal(expected, starts):
        return None
    return first, tuple(steps)


def strided_view(
    pool: np.ndarray, first: int, steps: tuple[int, ...], shape: tuple[int, ...], length: int
) -> np.ndarray:
    """A view of ``pool``: ``shape`` runs of ``length`` elements, the run at index
    (i, j, ...) starting at ``first + i * steps[0] + j * steps[1] + ...`` (see
    ``affine_steps``); writing into it writes memory."""
    last = first + sum((n - 1) * s for n, s in zip(shape, steps, strict=True)) + length
    if first < 0 or last > pool.size:
        raise IndexError(f"view [{first}, {last}) outside memory of {pool.size}")
    if length == 0 or 0 in shape:
        return pool[first:first].reshape(*shape, length)
    return memory_view(pool, first, (*shape, length), (*steps, 1))
