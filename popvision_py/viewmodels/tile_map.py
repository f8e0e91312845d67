"""The Tile Map's state, without Qt: every IPU's tiles as a floor plan (``tile_layout``),
IPUs side by side, coloured by one value per tile; the pixels of one image, which tile is
under a pixel, the colour scale, hover text and the selected tiles' outlines."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.events import Emitter
from profiler_core.model.tile_layout import TileLayout, tile_layout
from profiler_core.model.unique import sorted_unique

OUTLINE_PX = 2  # how deep a selected tile's outline reaches into its cell
ONE_VALUE_INDEX = 128  # every tile equal (and not 0): the scale's middle, neither low nor high


@dataclass(frozen=True)
class Geometry:
    """Where the plan sits in a ``width`` x ``height`` image: IPUs in ``ipu_columns``
    columns, each IPU one block of the layout, one unit of gap between blocks, ``scale``
    pixels per unit, the plan's top-left corner at (``left``, ``top``)."""

    width: int
    height: int
    ipu_columns: int
    ipu_rows: int
    scale: float
    left: float
    top: float
    units_wide: int
    units_high: int

    def ipu_origin(self, ipu: int, layout: TileLayout) -> tuple[float, float]:
        """Pixel position of IPU ``ipu``'s top-left tile."""
        column, row = ipu % self.ipu_columns, ipu // self.ipu_columns
        return (
            self.left + column * (layout.columns + 1) * self.scale,
            self.top + row * (layout.rows + 1) * self.scale,
        )


class TileMapModel:
    """One value per tile of ``num_ipus`` IPUs; widgets observe ``changed`` ("values" or
    "selection")."""

    def __init__(self, num_ipus: int, tiles_per_ipu: int) -> None:
        self.num_ipus = num_ipus
        self.tiles_per_ipu = tiles_per_ipu
        self.layout = tile_layout(tiles_per_ipu)
        self.values = np.zeros(self.num_tiles, dtype=np.float64)
        self.label = ""
        self.unit = ""  # "bytes" or "cycles"
        self.details = None  # optional callable tile -> extra hover lines
        self.selection = np.zeros(0, dtype=np.int64)
        self.changed = Emitter()
        self._version = 0
        self._index_cache: tuple | None = None
        # IPU-local tile at each unit of one IPU block
        self._block = self.layout.tile_grid()

    @property
    def num_tiles(self) -> int:
        return self.num_ipus * self.tiles_per_ipu

    # -- data ----------------------------------------------------------------------------
    def set_values(self, values: np.ndarray, label: str, unit: str) -> None:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (self.num_tiles,):
            raise ValueError(f"{values.shape[0]} values for {self.num_tiles} tiles")
        self.values, self.label, self.unit = values, label, unit
        self._version += 1
        self.changed.emit("values")

    def select_tiles(self, tiles: np.ndarray) -> None:
        tiles = sorted_unique(np.asarray(tiles, dtype=np.int64))
        tiles = tiles[(tiles >= 0) & (tiles < self.num_tiles)]
        if not np.array_equal(tiles, self.selection):
            self.selection = tiles
            self.changed.emit("selection")

    # -- colour scale --------------------------------------------------------------------
    @property
    def scale_max(self) -> float:
        return float(self.values.max(initial=0.0))

    @property
    def scale_min(self) -> float:
        """The scale starts at the emptiest tile, so differences between full tiles show."""
        return float(self.values.min()) if self.values.size else 0.0

    def display_unit(self) -> tuple[float, str]:
        """(divisor, unit) the colour scale is labelled in: KiB for bytes, else as is."""
        if self.unit == "bytes":
            return 1024.0, "KiB"
        return 1.0, self.unit

    @property
    def one_value(self) -> bool:
        """Every tile holds the same value: a scale from it to itself, on which no tile is
        more or less than another (a step whose every tile runs 1,697 cycles)."""
        return bool(self.values.size) and self.scale_max <= self.scale_min

    def lut_index(self) -> np.ndarray:
        """int (tiles,): each tile's entry of a 256-colour scale from the smallest value to
        the largest. When every tile is equal there is no scale: all take its middle colour
        (the bottom one when they are all 0), never the top that marks the hottest tiles."""
        low, top = self.scale_min, self.scale_max
        if top <= low:
            return np.full(self.num_tiles, ONE_VALUE_INDEX if top > 0 else 0, dtype=np.int64)
        return np.clip(np.round((self.values - low) / (top - low) * 255), 0, 255).astype(np.int64)

    # -- geometry ------------------------------------------------------------------------
    def geometry(self, width: int, height: int) -> Geometry:
        """The IPU arrangement giving tiles the most pixels in ``width`` x ``height``."""
        rows, columns = self.layout.rows, self.layout.columns
        best = None
        for ipu_columns in range(1, self.num_ipus + 1):
            ipu_rows = math.ceil(self.num_ipus / ipu_columns)
            wide = ipu_columns * (columns + 1) - 1
            high = ipu_rows * (rows + 1) - 1
            scale = min(width / wide, height / high)
            if best is None or scale > best[0] + 1e-9:
                best = (scale, ipu_columns, ipu_rows, wide, high)
        scale, ipu_columns, ipu_rows, wide, high = best
        left = (width - wide * scale) / 2
        top = (height - high * scale) / 2
        return Geometry(width, height, ipu_columns, ipu_rows, scale, left, top, wide, high)

    def tile_index_image(self, width: int, height: int) -> np.ndarray:
        """int64 (height, width): the tile drawn at each pixel, -1 for gaps and margins."""
        key = (width, height)
        if self._index_cache is not None and self._index_cache[0] == key:
            return self._index_cache[1]
        g = self.geometry(width, height)
        rows, columns = self.layout.rows, self.layout.columns
        # the whole plan in units: one block per IPU, -1 in the gaps
        units = np.full((g.units_high, g.units_wide), -1, dtype=np.int64)
        for ipu in range(self.num_ipus):
            c, r = ipu % g.ipu_columns, ipu // g.ipu_columns
            block = np.where(self._block >= 0, self._block + ipu * self.tiles_per_ipu, -1)
            y, x = r * (rows + 1), c * (columns + 1)
            units[y : y + rows, x : x + columns] = block
        ux = np.floor((np.arange(width) + 0.5 - g.left) / g.scale).astype(np.int64)
        uy = np.floor((np.arange(height) + 0.5 - g.top) / g.scale).astype(np.int64)
        inside_x = (ux >= 0) & (ux < g.units_wide)
        inside_y = (uy >= 0) & (uy < g.units_high)
        index = units[np.clip(uy, 0, g.units_high - 1)][:, np.clip(ux, 0, g.units_wide - 1)]
        index[~inside_y, :] = -1
        index[:, ~inside_x] = -1
        self._index_cache = (key, index)
        return index

    def rgba(
        self,
        width: int,
        height: int,
        lut: np.ndarray,
        background: tuple[int, int, int, int],
        outline: tuple[int, int, int, int],
    ) -> np.ndarray:
        """uint8 (height, width, 4): the map's pixels, the selected tiles outlined
        ``OUTLINE_PX`` pixels deep inside their cells (``outline``, a colour the heat
        scale does not use), so a picked tile stands out on any colour."""
        index = self.tile_index_image(width, height)
        colours = np.vstack([np.asarray(lut)[self.lut_index()], [background]]).astype(np.uint8)
        image = colours[index]  # index -1 takes the background row
        if self.selection.size:
            chosen = np.zeros(self.num_tiles + 1, dtype=bool)
            chosen[self.selection] = True
            picked = chosen[index]
            edge = np.zeros_like(picked)
            for step in range(1, OUTLINE_PX + 1):
                edge[step:, :] |= index[step:, :] != index[:-step, :]
                edge[:-step, :] |= index[:-step, :] != index[step:, :]
                edge[:, step:] |= index[:, step:] != index[:, :-step]
                edge[:, :-step] |= index[:, :-step] != index[:, step:]
            image[picked & edge] = outline
        return np.ascontiguousarray(image)

    # -- picking -------------------------------------------------------------------------
    def tile_at(self, x: float, y: float, width: int, height: int) -> int:
        """The tile at pixel (x, y), -1 for none."""
        index = self.tile_index_image(width, height)
        xi, yi = int(x), int(y)
        if not (0 <= xi < width and 0 <= yi < height):
            return -1
        return int(index[yi, xi])

    def tiles_in_rect(
        self, x0: float, y0: float, x1: float, y1: float, width: int, height: int
    ) -> np.ndarray:
        """Every tile with a pixel inside the rectangle (corners in any order)."""
        index = self.tile_index_image(width, height)
        left, right = sorted((int(x0), int(x1)))
        top, bottom = sorted((int(y0), int(y1)))
        left, top = max(left, 0), max(top, 0)
        patch = index[top : bottom + 1, left : right + 1]
        tiles = sorted_unique(patch)
        return tiles[tiles >= 0]

    def tile_place(self, tile: int) -> tuple[int, int, int]:
        """(IPU, row, column) of ``tile`` on the plan."""
        ipu, local = divmod(int(tile), self.tiles_per_ipu)
        return ipu, int(self.layout.row[local]), int(self.layout.column[local])

    def hover_text(self, tile: int) -> str:
        if not 0 <= tile < self.num_tiles:
            return ""
        ipu, row, column = self.tile_place(tile)
        value = self.values[tile]
        shown = f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
        lines = [f"Tile {tile} (IPU {ipu}, row {row}, column {column})"]
        details = self.details(tile) if self.details is not None else []
        # the details' first line may be the metric itself, with more to say (Total memory
        # against the limit): then it is said once, there
        if not (details and details[0].startswith(f"{self.label}:")):
            lines.append(f"{self.label}: {shown} {self.unit}".rstrip())
        return "\n".join(lines + details)
