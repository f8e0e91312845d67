"""Reading and writing a list of element addresses, as a strided slice whenever possible.

Compiling turns every edge, copy and stream endpoint into an ``Access``. When the
addresses form an arithmetic progression (the common case: a tensor mapped in order),
reads are numpy views and writes go straight into memory, so a batched codelet costs
what the same numpy call on plain arrays costs; otherwise it gathers and scatters.
"""

from __future__ import annotations

import numpy as np

from ipu_engine.types import Type

Memory = dict[Type, np.ndarray]


class Access:
    """Where a flat run of elements of one type lives in engine memory."""

    __slots__ = ("index", "size", "slice", "type")

    def __init__(self, elem_type: Type, addr: np.ndarray) -> None:
        self.type = elem_type
        self.size = int(addr.size)
        self.slice: slice | None = _as_slice(addr)
        self.index: np.ndarray | None = None if self.slice is not None else addr

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
        return pool[self.index]

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
        else:
            pool[self.index] = values

    def store_back(self, memory: Memory, buffer: np.ndarray) -> None:
        """After a codelet wrote into ``writable``'s array: nothing to do for a view."""
        if self.slice is None:
            memory[self.type][self.index] = buffer


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
