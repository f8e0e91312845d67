"""libpva's variables: ``name``, ``size`` in bytes (whole variable, or its part on the tiles
asked about), ``_id``; equal when they are the same variable, so scripts can key on them.
Memory that is not a variable but always live on a tile (code, stacks, ...) appears among
the always-live variables as one entry per category named by libpva's category name, as
libpva lists it, with ``_id`` -1."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from profiler_core.pva.lazy import LazyList
from profiler_core.pva.unmodelled import PvaObject


class Variable(PvaObject):
    __slots__ = ("_id", "name", "size")

    def __init__(self, var_id: int, name: str, size: int) -> None:
        self._id, self.name, self.size = var_id, name, size

    @property
    def id(self) -> int:
        return self._id

    @property
    def bytes(self) -> int:
        """The same as ``size`` (an addition)."""
        return self.size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Variable):
            return NotImplemented
        return (self._id, self.name if self._id < 0 else "") == (
            other._id,
            other.name if other._id < 0 else "",
        )

    def __hash__(self) -> int:
        return hash((self._id, self.name if self._id < 0 else ""))

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, size={self.size})"


def variables(
    report: Any, var: np.ndarray, sizes: np.ndarray, extra: Sequence[Variable] = ()
) -> LazyList[Variable]:
    """The variables of ids ``var`` with ``sizes``, then ``extra``: a lazy list, so 400,000
    always-live variables cost nothing until a script reads them."""
    graph = report.graph
    var = np.asarray(var, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    count = len(var)

    def make(i: int) -> Variable:
        if i >= count:
            return extra[i - count]
        v = int(var[i])
        return Variable(v, graph.strings[int(graph.var_name[v])], int(sizes[i]))

    return LazyList(count + len(extra), make)
