"""Memory per tile by category, per IPU totals, tiles over the limit, and the variables
that live on a set of tiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.model.kinds import ELEMENT_TYPES, MemoryCategory


@dataclass(frozen=True)
class MemoryTable:
    """``by_category[c, tile]`` bytes, with the tile limit and IPU layout beside it."""

    by_category: np.ndarray  # int64 (categories, tiles)
    bytes_per_tile: int
    tiles_per_ipu: int

    @property
    def num_tiles(self) -> int:
        return int(self.by_category.shape[1])

    @property
    def num_ipus(self) -> int:
        return self.num_tiles // self.tiles_per_ipu

    @staticmethod
    def categories(include_gaps: bool = True) -> list[MemoryCategory]:
        return [c for c in MemoryCategory if include_gaps or not c.is_gap]

    def rows(self, include_gaps: bool = True) -> np.ndarray:
        """The category rows shown: all of them, or all but the gaps."""
        return self.by_category[[int(c) for c in self.categories(include_gaps)]]

    def total(self, include_gaps: bool = True) -> np.ndarray:
        """Bytes per tile."""
        return self.rows(include_gaps).sum(axis=0)

    def per_ipu(self, include_gaps: bool = True) -> np.ndarray:
        """Bytes per IPU and category, shape (IPUs, categories shown)."""
        rows = self.rows(include_gaps)
        return rows.reshape(rows.shape[0], self.num_ipus, self.tiles_per_ipu).sum(axis=2).T

    def over_limit(self) -> np.ndarray:
        """Tiles whose memory, gaps included, is more than a tile has."""
        return np.flatnonzero(self.total(True) > self.bytes_per_tile)

    def breakdown(self, tiles: np.ndarray, include_gaps: bool = True) -> np.ndarray:
        """Bytes per category summed over ``tiles`` (categories as ``categories()``)."""
        return self.rows(include_gaps)[:, np.asarray(tiles, dtype=np.int64)].sum(axis=1)

    def percent_of_tile(self, include_gaps: bool = True) -> np.ndarray:
        return 100.0 * self.total(include_gaps) / self.bytes_per_tile


def memory_table(report: Any) -> MemoryTable:
    return MemoryTable(
        np.asarray(report.memory.by_category, dtype=np.int64),
        int(report.target.bytes_per_tile),
        int(report.target.tiles_per_ipu),
    )


@dataclass(frozen=True)
class VariablesOnTiles:
    """Variables with bytes on a set of tiles, largest first."""

    var: np.ndarray  # int64 variable ids
    bytes: np.ndarray  # int64 bytes on the selected tiles
    total_bytes: np.ndarray  # int64 bytes of the whole variable
    tiles: np.ndarray  # int64 how many of the selected tiles hold part of it
    always_live: np.ndarray  # bool
    is_constant: np.ndarray  # bool
    names: list[str]
    types: list[str]
    shapes: list[str]
    debug_names: list[str]  # the debug context's name ("" without debug.cbor)
    layers: list[str]
    ops: list[str]

    def __len__(self) -> int:
        return len(self.var)

    def matching(self, text: str) -> np.ndarray:
        """Rows whose name, debug context, layer or op contains ``text`` (case-insensitive)."""
        needle = text.lower()
        fields = zip(self.names, self.debug_names, self.layers, self.ops, strict=True)
        return np.array(
            [i for i, parts in enumerate(fields) if any(needle in p.lower() for p in parts)],
            dtype=np.int64,
        )


def variables_on_tiles(report: Any, tiles: np.ndarray, debug: Any = None) -> VariablesOnTiles:
    """Every variable with elements on ``tiles``; ``debug`` (a DebugData) adds contexts."""
    g = report.graph
    num_tiles = report.target.num_tiles
    selected = np.zeros(num_tiles, dtype=bool)
    selected[np.asarray(tiles, dtype=np.int64)] = True
    in_selection = selected[g.region_tile]
    region_var = g.region_var[in_selection].astype(np.int64)
    elem_size = np.where(g.var_elements > 0, g.var_bytes // np.maximum(g.var_elements, 1), 0)
    region_bytes = g.region_elements[in_selection] * elem_size[region_var]
    n = len(g.var_name)
    per_var = np.bincount(region_var, weights=region_bytes, minlength=n).astype(np.int64)
    pair = np.unique(region_var * num_tiles + g.region_tile[in_selection])
    tile_count = np.bincount(pair // num_tiles, minlength=n)
    var = np.flatnonzero(per_var)
    var = var[np.lexsort((var, -per_var[var]))]
    strings = g.strings
    debug_ids = g.var_debug[var]
    return VariablesOnTiles(
        var=var,
        bytes=per_var[var],
        total_bytes=g.var_bytes[var].astype(np.int64),
        tiles=tile_count[var].astype(np.int64),
        always_live=g.var_always_live[var].astype(bool),
        is_constant=g.var_is_constant[var].astype(bool),
        names=strings.take(g.var_name[var]),
        types=[ELEMENT_TYPES[t] for t in g.var_type[var].tolist()],
        shapes=["[" + ",".join(map(str, g.shape_of(int(v)))) + "]" for v in var.tolist()],
        debug_names=_debug_column(debug, "name", debug_ids),
        layers=_debug_column(debug, "layer", debug_ids),
        ops=_debug_column(debug, "op", debug_ids),
    )


def _debug_column(debug: Any, column: str, ids: np.ndarray) -> list[str]:
    if debug is None:
        return [""] * len(ids)
    values = getattr(debug, column)
    return [values[i] if 0 <= i < len(values) else "" for i in ids.tolist()]
