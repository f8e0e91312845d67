"""Where each tile of an IPU is drawn on a floor plan: rows and columns per target.

Source: no public document in our reference corpus (the PopVision Graph Analyser guide, the
IPU Programmer's Guide pages we hold) gives the GC200 / Mk2 tile floor plan; the Graph
Analyser's Tile Map draws its own. So this table is a documented approximation, not the
die: an IPU is drawn as ``rows`` x ``columns`` tiles with tile numbers running down each
column, columns left to right -- for the Mk2 (GC200, 1,472 tiles) and Bow (same tile array)
32 rows x 46 columns, for the Mk1 (GC2, 1,216 tiles) 32 rows x 38 columns; any other tile
count gets the most nearly square grid whose rows divide it (else a ragged last column).
Change ``KNOWN_LAYOUTS`` when a public source gives the physical layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

KNOWN_LAYOUTS: dict[int, tuple[int, int]] = {
    1472: (32, 46),  # Mk2 GC200 and Bow: approximation (see the module docstring)
    1216: (32, 38),  # Mk1 GC2: approximation
}
"""tiles per IPU -> (rows, columns)."""


@dataclass(frozen=True)
class TileLayout:
    """The floor plan of one IPU: tile ``t`` of the IPU sits at ``row[t]``, ``column[t]``."""

    rows: int
    columns: int
    row: np.ndarray  # int64 (tiles per IPU,)
    column: np.ndarray  # int64 (tiles per IPU,)
    source: str

    @property
    def tiles_per_ipu(self) -> int:
        return len(self.row)

    def tile_grid(self) -> np.ndarray:
        """int64 (rows, columns): the IPU-local tile at each place, -1 where there is none."""
        grid = np.full((self.rows, self.columns), -1, dtype=np.int64)
        grid[self.row, self.column] = np.arange(self.tiles_per_ipu)
        return grid


def _grid_shape(tiles: int) -> tuple[int, int]:
    if tiles in KNOWN_LAYOUTS:
        return KNOWN_LAYOUTS[tiles]
    root = max(math.isqrt(tiles), 1)
    rows = next((r for r in range(root, 0, -1) if tiles % r == 0), 1)
    if rows * 4 < root:  # a prime-ish count: near-square with a ragged last column
        rows = root
    return rows, math.ceil(tiles / rows)


def tile_layout(tiles_per_ipu: int) -> TileLayout:
    """The floor plan for an IPU of ``tiles_per_ipu`` tiles."""
    if tiles_per_ipu < 1:
        raise ValueError(f"an IPU has at least one tile, not {tiles_per_ipu}")
    rows, columns = _grid_shape(tiles_per_ipu)
    tiles = np.arange(tiles_per_ipu, dtype=np.int64)
    known = tiles_per_ipu in KNOWN_LAYOUTS
    source = (
        "approximation: no public GC200/Mk2 floor plan found; tiles numbered down each column"
        if known
        else "near-square grid for this tile count; tiles numbered down each column"
    )
    return TileLayout(rows, columns, tiles % rows, tiles // rows, source)
