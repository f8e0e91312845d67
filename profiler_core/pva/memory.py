"""libpva's ``tile.memory``: totals with and without gaps, always-live and not-always-live
bytes, ``category.<name>.total`` under libpva's category names, and the vertex types whose
code the tile holds. Every number is a cell of ``memory_table`` (one array per report)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from profiler_core.model.kinds import MemoryCategory as M
from profiler_core.pva.unmodelled import PvaObject

CATEGORIES: dict[str, tuple[M, ...]] = {
    "variable": (M.ALWAYS_LIVE_VARIABLES, M.NOT_ALWAYS_LIVE_VARIABLES),
    "constant": (M.CONSTANTS,),
    "vertexCode": (M.VERTEX_CODE,),
    "vertexInstanceState": (M.VERTEX_STATE,),
    "vectorListDescriptor": (M.VERTEX_DESCRIPTORS,),
    "controlCode": (M.CONTROL_CODE,),
    "internalExchangeCode": (M.INTERNAL_EXCHANGE_CODE,),
    "hostExchangeCode": (M.HOST_EXCHANGE_CODE,),
    "globalExchangeCode": (M.GLOBAL_EXCHANGE_CODE,),
    "stack": (M.STACK,),
    "instrumentationResults": (M.INSTRUMENTATION,),
    # additions: our model's categories that libpva has no name for
    "alwaysLiveVariable": (M.ALWAYS_LIVE_VARIABLES,),
    "notAlwaysLiveVariable": (M.NOT_ALWAYS_LIVE_VARIABLES,),
    "exchangeBuffers": (M.EXCHANGE_BUFFERS,),
    "alignmentGaps": (M.ALIGNMENT_GAPS,),
    "regionGaps": (M.REGION_GAPS,),
}
"""libpva category name -> our categories. Every one of our 15 categories is in exactly one
of the names up to ``instrumentationResults`` or one of the additions after it, apart from
``variable`` which is the two variable categories together (as libpva counts them)."""

LIBPVA_CATEGORIES = tuple(list(CATEGORIES)[:11])
"""The names libpva has; the others are additions of ours."""

_NOT_MODELLED_CATEGORIES = {
    "vertexFieldData": (
        "the model keeps edge pointers with the descriptors",
        "vectorListDescriptor",
    ),
    "copyDescriptor": ("copies are exchanges in the model", "vectorListDescriptor"),
    "hostExchangePacketHeader": (
        "host packet headers are counted with the receive buffers",
        "exchangeBuffers",
    ),
    "globalExchangePacketHeader": (
        "packet headers are counted with the receive buffers",
        "exchangeBuffers",
    ),
    "globalMessage": ("IPU-Link messages are not modelled apart", "globalExchangeCode"),
    "rearrangement": ("rearrangements are ordinary variables in the model", "variable"),
    "sharedCodeStructs": ("shared code is counted as control code", "controlCode"),
    "sharedDataStructs": ("shared data is counted as control code", "controlCode"),
}


class CategoryMemory(PvaObject):
    """One category on one tile: ``total`` bytes."""

    __slots__ = ("total",)
    NOT_MODELLED: ClassVar[dict[str, tuple[str, str]]] = {
        name: ("the report has one interleaved figure per tile, not per category", "total")
        for name in ("interleaved", "nonInterleaved", "overflowed")
    }

    def __init__(self, total: int) -> None:
        self.total = total

    def __repr__(self) -> str:
        return f"CategoryMemory(total={self.total})"


class TileCategories(PvaObject):
    """``category.vertexCode.total`` etc.; ``names()`` lists the names (an addition)."""

    __slots__ = ("_rows", "_tile")
    NOT_MODELLED: ClassVar[dict[str, tuple[str, str]]] = _NOT_MODELLED_CATEGORIES

    def __init__(self, rows: np.ndarray, tile: int) -> None:
        self._rows = rows  # the memory table's by_category (categories, tiles)
        self._tile = tile

    @staticmethod
    def names(include_additions: bool = True) -> tuple[str, ...]:
        return tuple(CATEGORIES) if include_additions else LIBPVA_CATEGORIES


def _category(name: str, cats: tuple[M, ...]) -> property:
    rows = [int(c) for c in cats]

    def get(self: TileCategories) -> CategoryMemory:
        return CategoryMemory(sum(int(self._rows[r, self._tile]) for r in rows))

    get.__doc__ = f"Bytes of {' + '.join(c.label for c in cats)} on the tile."
    return property(get)


for _name, _cats in CATEGORIES.items():
    setattr(TileCategories, _name, _category(_name, _cats))
TileCategories.variables = TileCategories.variable  # type: ignore[attr-defined]


class MemoryTotal:
    __slots__ = ("excludingGaps", "includingGaps")

    def __init__(self, including: int, excluding: int) -> None:
        self.includingGaps = including
        self.excludingGaps = excluding


class VertexTypeOnTile(PvaObject):
    """A vertex type with vertices on the tile: ``type`` and ``codeBytes`` (its code, once per
    tile), ``count`` of its vertices there."""

    __slots__ = ("codeBytes", "count", "type")

    def __init__(self, vertex_type: Any, code_bytes: int, count: int) -> None:
        self.type, self.codeBytes, self.count = vertex_type, code_bytes, count

    def __repr__(self) -> str:
        return f"VertexTypeOnTile({self.type.name!r}, codeBytes={self.codeBytes})"


class TileMemory(PvaObject):
    """``total.includingGaps / excludingGaps``; ``alwaysLiveBytes`` (everything but the
    not-always-live variables and gaps) and ``notAlwaysLiveBytes`` (their peak on the tile)."""

    __slots__ = ("_columns", "_tile")

    def __init__(self, columns: Any, tile: int) -> None:
        self._columns = columns
        self._tile = tile

    @property
    def total(self) -> MemoryTotal:
        including, excluding = self._columns.tile_totals
        return MemoryTotal(int(including[self._tile]), int(excluding[self._tile]))

    @property
    def alwaysLiveBytes(self) -> int:
        return int(self._columns.always_live_per_tile[self._tile])

    @property
    def notAlwaysLiveBytes(self) -> int:
        return int(self._columns.category_rows[M.NOT_ALWAYS_LIVE_VARIABLES, self._tile])

    @property
    def category(self) -> TileCategories:
        return TileCategories(self._columns.category_rows, self._tile)

    @property
    def vertices(self) -> list[VertexTypeOnTile]:
        """The vertex types with vertices on the tile, in vertex type order."""
        types, counts = self._columns.tile_vertex_types(self._tile)
        code = self._columns.report.graph.vt_code_bytes
        return [
            VertexTypeOnTile(self._columns.vertex_type(t), int(code[t]), c)
            for t, c in zip(types.tolist(), counts.tolist(), strict=True)
        ]

    def byCategory(self) -> dict[str, int]:
        """Bytes per memory category label (an addition to libpva)."""
        rows = self._columns.category_rows
        return {c.label: int(rows[c, self._tile]) for c in M}
