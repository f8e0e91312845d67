"""Reading and writing a list of element addresses, as a strided slice whenever possible.

Compiling turns every edge, copy and stream endpoint into an ``Access``. When the
addresses form an arithmetic progression (the common case: a tensor mapped in order),
reads are numpy views and writes go straight into memory, so a batched codelet costs
what the same numpy call on plain arrays costs; otherwise it gathers and scatters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ipu_engine.common.types import Type
from ipu_engine.poplar import strided
from ipu_engine.poplar.arrays import memory_view, strided_pattern
from ipu_engine.poplar.runs import Runs, merge_adjacent, narrowed

if TYPE_CHECKING:
    from ipu_engine.poplar.tensor import Tensor

Memory = dict[Type, np.ndarray]


class Access:
    """Where a flat run of elements of one type lives in engine memory."""

    __slots__ = ("index", "pattern", "size", "slice", "type")

    def __init__(self, elem_type: Type, addr: np.ndarray, patterned: bool = False) -> None:
        self.type = elem_type
        self.size = int(addr.size)
        self.slice: slice | None = _as_slice(addr)
        self.index: np.ndarray | None = None if self.slice is not None else addr
        # ``patterned``: addresses that are an N-d strided pattern (a tensor stored NHWC
        # read as NCHW) are read and written as a strided view of memory, not gathered
        # and scattered through one address per element
        self.pattern: tuple[int, tuple[int, ...], tuple[int, ...]] | None = None
        if patterned and self.index is not None:
            self.pattern = _pattern(addr)

    @property
    def is_view(self) -> bool:
        return self.slice is not None

    def read(self, memory: Memory) -> np.ndarray:
        """The values, as a read-only view when possible, else a gathered copy."""
        pool = memory[self.type]
        if self.slice is not None:
            view = pool[self.slice]
            view.flags.writeable = False
            return view
        if self.pattern is not None:  # a copy in this order (a view only if contiguous)
            values = memory_view(pool, *self.pattern).reshape(-1)
            if np.may_share_memory(values, pool):
                values.flags.writeable = False
            return values
        return pool[self.index]

    def read_into(self, memory: Memory, out: np.ndarray) -> None:
        """The values copied into ``out`` (``size`` elements of this type, contiguous): a
        strided pattern (a tensor stored NHWC read as NCHW) by ``strided.copy``, in
        tiles, where ``read`` would copy it once in numpy's order and the caller again."""
        if self.pattern is not None:
            view = memory_view(memory[self.type], *self.pattern)
            strided.copy(out.reshape(view.shape), view)
        else:
            out[...] = self.read(memory)

    def writable(self, memory: Memory) -> np.ndarray:
        """An array to write results into: memory itself when possible, else a copy
        of the current values that ``store`` puts back."""
        pool = memory[self.type]
        if self.slice is not None:
            return pool[self.slice]
        return pool[self.index]

    def store(self, memory: Memory, values: np.ndarray) -> None:
        """Write ``values`` (broadcast to this access's size) to memory."""
        pool = memory[self.type]
        if self.slice is not None:
            pool[self.slice] = values
        elif self.pattern is not None:
            view = memory_view(pool, *self.pattern)
            view[...] = np.broadcast_to(values, (self.size,)).reshape(view.shape)
        else:
            pool[self.index] = values

    def store_back(self, memory: Memory, buffer: np.ndarray) -> None:
        """After a codelet wrote into ``writable``'s array: nothing to do for a view."""
        if self.slice is None:
            memory[self.type][self.index] = buffer


def _pattern(addr: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """(first, shape, steps) of a view of memory holding ``addr`` in its row-major order,
    when they are a strided pattern of distinct addresses (a view written is then each
    element written once, as the scatter writes it); else None."""
    found = strided_pattern(addr)
    if found is None:
        return None
    first, sizes, steps = found
    shape, steps_out = tuple(reversed(sizes)), tuple(reversed(steps))
    if len(shape) > 8 or 0 in steps_out or not _distinct(shape, steps_out):
        return None
    return first, shape, steps_out


def _distinct(shape: tuple[int, ...], steps: tuple[int, ...]) -> bool:
    """Whether no two indices of a view of ``shape`` and positive ``steps`` share an
    address: each step, smallest first, clears everything the smaller ones span."""
    span = 1
    for n, step in sorted(zip(shape, steps, strict=True), key=lambda p: p[1]):
        if n > 1 and step < span:
            return False
        span = max(span, step * (n - 1) + span)
    return True


def _as_slice(addr: np.ndarray) -> slice | None:
    n = addr.size
    if n == 0:
        return slice(0, 0)
    first = int(addr[0])
    if n == 1:
        return slice(first, first + 1)
    step = int(addr[1]) - first
    last = int(addr[-1])
    if step == 0 or last != first + step * (n - 1):
        return None
    if not np.array_equal(np.diff(addr), np.full(n - 1, step, dtype=addr.dtype)):
        return None
    stop = last + (1 if step > 0 else -1)
    return slice(first, stop if stop >= 0 else None, step)


class RunsAccess:
    """An ``Access`` over runs of addresses: a view when there is one run, a 2-D strided
    view when the runs are equally long and equally spaced, else a gather whose
    per-element addresses are made for that read or write only."""

    __slots__ = ("rows", "runs", "size", "type")

    def __init__(self, elem_type: Type, runs: Runs) -> None:
        self.type = elem_type
        # runs that continue each other read as one; kept in int32 where they fit, as edges
        self.runs = narrowed(merge_adjacent(runs))
        self.size = runs.size
        self.rows = _uniform(self.runs.start, self.runs.length)

    @property
    def is_view(self) -> bool:
        return self.rows is not None and len(self.runs) <= 1

    def _grid(self, pool: np.ndarray) -> np.ndarray:
        first, count, length, stride = self.rows  # type: ignore[misc]
        return strided_rows(pool, first, count, length, stride)

    def read(self, memory: Memory) -> np.ndarray:
        pool = memory[self.type]
        if self.rows is not None:
            values = self._grid(pool).reshape(-1)
            values.flags.writeable = False
            return values
        return pool[self.runs.addresses()]

    def read_into(self, memory: Memory, out: np.ndarray) -> None:
        """The values copied into ``out`` (``size`` elements, contiguous)."""
        out[...] = self.read(memory)

    def writable(self, memory: Memory, addresses: np.ndarray | None = None) -> np.ndarray:
        """As ``Access.writable``; ``addresses`` (from ``gather_addresses``) saves making
        them again when the caller keeps them for ``store_back``."""
        pool = memory[self.type]
        if self.rows is not None:
            return self._grid(pool).reshape(-1)
        return pool[self.runs.addresses() if addresses is None else addresses]

    def gather_addresses(self) -> np.ndarray | None:
        """The per-element addresses a gather uses (None for a view): made once by a
        caller that both reads an output (``writable``) and writes it (``store_back``)."""
        return None if self.rows is not None else self.runs.addresses()

    def store(self, memory: Memory, values: np.ndarray) -> None:
        pool = memory[self.type]
        if self.rows is not None:
            grid = self._grid(pool)
            if values.size != self.size:  # one value for every element
                values = np.broadcast_to(values, (self.size,))
            grid[...] = values.reshape(grid.shape)
        else:
            pool[self.runs.addresses()] = values

    def store_back(
        self, memory: Memory, buffer: np.ndarray, addresses: np.ndarray | None = None
    ) -> None:
        pool = memory[self.type]
        if self.rows is not None:
            grid = self._grid(pool)
            if not np.may_share_memory(grid, buffer):
                grid[...] = buffer.reshape(grid.shape)
        else:
            pool[self.runs.addresses() if addresses is None else addresses] = buffer


def strided_rows(pool: np.ndarray, first: int, count: int, length: int, stride: int) -> np.ndarray:
    """``count`` rows of ``length`` elements starting ``stride`` apart, as a view of pool."""
    if count == 0 or length == 0:
        return pool[first:first][: count * length].reshape(count, length)
    return memory_view(pool, first, (count, length), (stride, 1))


def _uniform(start: np.ndarray, length: np.ndarray) -> tuple[int, int, int, int] | None:
    """(first, rows, length, stride) when runs are equally long and equally spaced,
    without overlapping (so writing through the view is writing each element once)."""
    if start.size == 0:
        return (0, 0, 0, 1)
    n = int(length[0])
    if not (length == n).all():
        return None
    if start.size == 1:
        return (int(start[0]), 1, n, n)
    stride = int(start[1] - start[0])
    if stride < n:
        return None
    if not np.array_equal(start, start[0] + stride * np.arange(start.size)):
        return None
    return (int(start[0]), int(start.size), n, stride)


def column_access(
    elem_type: Type, addr: np.ndarray | None, runs: Runs | None
) -> Access | RunsAccess:
    """The access for a column kept as addresses or as runs."""
    if runs is not None:
        return RunsAccess(elem_type, runs)
    assert addr is not None
    return Access(elem_type, addr)


def tensor_access(tensor: Tensor) -> Access | RunsAccess:
    """The access to a tensor's elements in row-major order: one run for a whole
    variable (no per-element addresses), else its addresses."""
    span = tensor.pool_range()
    if span is not None:
        one = Runs(np.array([span[0]], dtype=np.int64), np.array([span[1] - span[0]], np.int64))
        return RunsAccess(tensor.type, one)
    return Access(tensor.type, tensor.flat_addr(), patterned=True)
