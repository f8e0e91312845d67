"""libpva's variables: ``name``, ``size`` in bytes (whole variable, or its part on the tiles
asked about), ``_id``; equal when they are the same variable, so scripts can key on them.
Memory that is not a variable but always live on a tile (code, stacks, ...) appears among
the always-live variables as one entry per category named by libpva's category name, as
libpva lists it, with ``_id`` -1."""

from __future__ import annotations

from typing import Any

import numpy as np

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


def variables(report: Any, var: np.ndarray, sizes: np.ndarray) -> list[Variable]:
    """Variable objects of ids ``var`` with ``sizes``, names decoded in one go."""
    graph = report.graph
    names = graph.strings.take(graph.var_name[np.asarray(var, dtype=np.int64)])
    return [
        Variable(v, n, s)
        for v, n, s in zip(np.asarray(var).tolist(), names, np.asarray(sizes).tolist(), strict=True)
    ]
