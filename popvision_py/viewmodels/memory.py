"""State of the Memory report: which tiles are selected, what the chart shows, and the arrays
it draws, all from ``profiler_core.analysis.memory``.

The chart's x axis holds *positions*: tiles in tile order, tiles sorted by memory, or IPUs.
``values()`` gives the stacked bytes per position; ``tile_of()`` maps a position back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.colors import CATEGORY_COLORS, CATEGORY_HELP
from popvision_py.viewmodels.events import Emitter
from popvision_py.viewmodels.format import format_bytes, format_percent
from profiler_core.analysis.memory import MemoryTable
from profiler_core.analysis.tiles import (
    SelectionError,
    format_tile_selection,
    parse_tile_selection,
)
from profiler_core.model.kinds import MemoryCategory
from profiler_core.model.unique import sorted_unique


class Layout(enum.Enum):
    """How the chart lays out memory."""

    BY_TILE = "By tile"
    BY_IPU = "By IPU"
    HEAT_MAP = "Heat map"
    BY_REGION = "By memory region"
    TILE_MAP = "Tile map"  # drawn by views/tile_map, not by the memory chart


class HeatScale(enum.Enum):
    """What the heat map's hottest colour means."""

    DATA_MAX = "0 to the hottest tile"  # the default: a report far below the limit is not
    TILE_LIMIT = "0 to the tile limit"  # uniformly dark; the legend marks the limit


REGION_LABELS = ("Interleaved", "Non-interleaved")
REGION_COLORS = ("#3b7dd8", "#e0892c")
REGION_HELP = (
    "Bytes in the tile's interleaved memory region, where data goes first.",
    "Bytes in the non-interleaved region: code, and data that spilled over.",
)


LAYOUT_HELP = {
    Layout.BY_TILE: "One stacked bar per tile of every IPU, coloured by category.",
    Layout.BY_IPU: "One stacked bar per IPU: the memory of all its tiles.",
    Layout.HEAT_MAP: "One row per IPU, one pixel per tile, coloured by the tile's total: "
    "hot tiles of many IPUs at a glance.",
    Layout.BY_REGION: "One bar per tile split by memory region: interleaved and "
    "non-interleaved (gaps included).",
    Layout.TILE_MAP: "Every IPU's tiles as a floor plan, coloured by total memory, a "
    "category or a variable's bytes; hover for a tile's numbers, drag to select tiles.",
}


@dataclass(frozen=True)
class Breakdown:
    """The details panel's category table: one column per selected tile, or their sum."""

    headers: list[str]
    categories: list[MemoryCategory]
    values: np.ndarray  # int64 (categories, columns)

    @property
    def totals(self) -> np.ndarray:
        return self.values.sum(axis=0)


class MemoryViewModel:
    """Everything the Memory report shows, for one report; widgets observe ``changed``."""

    MAX_TILE_COLUMNS = 64  # more selected tiles than this are shown as their sum

    def __init__(self, table: MemoryTable, name: str = "") -> None:
        self.table = table
        self.name = name
        self.include_gaps = True
        self.show_max_memory = False  # the y axis fits the data; on, it reaches the limit
        self.units = "KiB"
        self.heat_scale = HeatScale.DATA_MAX
        self.layout = Layout.BY_TILE
        self.sort_by_memory = False
        self.sum_selection = False
        self.selection = np.zeros(0, dtype=np.int64)
        self.selection_error = ""
        self.changed = Emitter()  # emits the name of what changed: "chart" or "selection"
        self._cache: dict[tuple, np.ndarray] = {}
        self.scale_group: list[MemoryViewModel] = [self]  # share y axis and heat scale

    def share_scales(self, models: list[MemoryViewModel]) -> None:
        """Give ``models`` (the sides of a comparison) one y axis and one colour scale."""
        for model in models:
            model.scale_group = list(models)

    # -- options ------------------------------------------------------------------------
    def set_include_gaps(self, on: bool) -> None:
        self._set("include_gaps", on, "chart")

    def set_show_max_memory(self, on: bool) -> None:
        self._set("show_max_memory", on, "chart")

    def set_layout(self, layout: Layout) -> None:
        self._set("layout", layout, "chart")

    def set_units(self, units: str) -> None:
        self._set("units", units, "chart")

    def set_heat_scale(self, scale: HeatScale) -> None:
        self._set("heat_scale", scale, "chart")

    def set_sort_by_memory(self, on: bool) -> None:
        self._set("sort_by_memory", on, "chart")

    def set_sum_selection(self, on: bool) -> None:
        self._set("sum_selection", on, "selection")

    def _set(self, attribute: str, value: object, what: str) -> None:
        if getattr(self, attribute) != value:
            setattr(self, attribute, value)
            self.changed.emit(what)

    # -- selection ----------------------------------------------------------------------
    @property
    def selection_text(self) -> str:
        return format_tile_selection(self.selection)

    def select_text(self, text: str) -> bool:
        """Select the tiles typed (``0,5,100-120``); False, with ``selection_error``, if bad."""
        try:
            tiles = parse_tile_selection(text, self.table.num_tiles)
        except SelectionError as error:
            self.selection_error = error.problem
            self.changed.emit("selection")
            return False
        self.selection_error = ""
        self.select_tiles(tiles)
        return True

    def select_tiles(self, tiles: np.ndarray) -> None:
        self.selection = sorted_unique(np.asarray(tiles, dtype=np.int64))
        self.selection_error = ""
        self.changed.emit("selection")

    def add_tiles(self, tiles: np.ndarray) -> None:
        self.select_tiles(np.concatenate([self.selection, np.asarray(tiles, dtype=np.int64)]))

    def tiles_at(self, position: int) -> np.ndarray:
        """The tiles a click on ``position`` picks: one tile, or all tiles of an IPU."""
        if self.layout is Layout.BY_IPU:
            per_ipu = self.table.tiles_per_ipu
            return np.arange(position * per_ipu, (position + 1) * per_ipu)
        return np.array([self.tile_of(position)], dtype=np.int64)

    # -- what the chart draws -----------------------------------------------------------
    @property
    def categories(self) -> list[MemoryCategory]:
        return self.table.categories(self.include_gaps)

    def series(self) -> list[tuple[str, str, str]]:
        """(label, colour, help) of each stacked series, bottom first."""
        if self.layout is Layout.BY_REGION:
            return list(zip(REGION_LABELS, REGION_COLORS, REGION_HELP, strict=True))
        return [(c.label, CATEGORY_COLORS[c], CATEGORY_HELP[c]) for c in self.categories]

    def _cached(self, key: tuple, build: object) -> np.ndarray:
        if key not in self._cache:
            self._cache[key] = build()  # type: ignore[operator]
        return self._cache[key]

    def tile_totals(self) -> np.ndarray:
        """Bytes per tile, in tile order, with or without gaps as chosen."""
        return self._cached(
            ("total", self.include_gaps), lambda: self.table.total(self.include_gaps)
        )

    def order(self) -> np.ndarray:
        """Tile shown at each position of the by-tile chart (largest first when sorted)."""
        if not self.sort_by_memory:
            return self._cached(("order", False), lambda: np.arange(self.table.num_tiles))
        totals = self.tile_totals()
        return self._cached(
            ("order", True, self.include_gaps), lambda: np.argsort(-totals, kind="stable")
        )

    def values(self) -> np.ndarray:
        """Stacked bytes per position, (categories shown, positions), for the bar layouts."""
        if self.layout is Layout.BY_IPU:
            return self._cached(
                ("ipu", self.include_gaps), lambda: self.table.per_ipu(self.include_gaps).T
            )
        if self.layout is Layout.BY_REGION:
            rows = self._cached(("regions",), self.table.by_region)
            key: tuple = ("sorted regions", self.include_gaps)
        else:
            rows = self._cached(
                ("rows", self.include_gaps), lambda: self.table.rows(self.include_gaps)
            )
            key = ("sorted", self.include_gaps)
        if not self.sort_by_memory:
            return rows
        return self._cached(key, lambda: rows[:, self.order()])

    def totals(self) -> np.ndarray:
        """Total bytes per position (what decides which tile a pixel column shows)."""
        if self.layout in (Layout.BY_IPU, Layout.BY_REGION):
            return self.values().sum(axis=0)
        return self.tile_totals()[self.order()] if self.sort_by_memory else self.tile_totals()

    def heat_map(self) -> np.ndarray:
        """Bytes per tile as (IPUs, tiles per IPU), for the heat-map layout."""
        return self.tile_totals().reshape(self.table.num_ipus, self.table.tiles_per_ipu)

    def heat_selection(self) -> tuple[np.ndarray, np.ndarray]:
        """The selected tiles' places on the heat map: (tile on its IPU, IPU)."""
        per_ipu = self.table.tiles_per_ipu
        return self.selection % per_ipu, self.selection // per_ipu

    @property
    def num_positions(self) -> int:
        if self.layout is Layout.BY_IPU:
            return self.table.num_ipus
        if self.layout is Layout.HEAT_MAP:
            return self.table.tiles_per_ipu
        return self.table.num_tiles

    def tile_of(self, position: int) -> int:
        return int(self.order()[position]) if self.sort_by_memory else int(position)

    def own_y_top(self) -> float:
        """The largest bar, or the limit when Show max memory asks for it and it is higher."""
        top = float(self.totals().max(initial=0))
        limit = self.limit()
        if self.show_max_memory and limit is not None:
            top = max(top, limit)
        return max(top, 1.0)

    def y_max(self) -> float:
        """Top of the y axis: it fits the data (of every side of a comparison), with room
        above the bars for the limit label, and for the IPU names when there are some."""
        room = 1.16 if self.ipu_boundaries()[0].size else 1.08
        return max(m.own_y_top() for m in self.scale_group) * room

    def limit(self) -> float | None:
        """The memory a bar must fit in (a tile's; by IPU, an IPU's); None for the heat map."""
        if self.layout is Layout.HEAT_MAP:
            return None
        if self.layout is Layout.BY_IPU:
            return float(self.table.bytes_per_tile * self.table.tiles_per_ipu)
        return float(self.table.bytes_per_tile)

    def limit_in_view(self) -> bool:
        """Does the limit line fall inside the y axis (else the chart says it is above)."""
        limit = self.limit()
        return limit is not None and limit <= self.y_max()

    def limit_text(self) -> str:
        limit = self.limit()
        if limit is None:
            return ""
        what = "IPU limit" if self.layout is Layout.BY_IPU else "Tile limit"
        size = format_bytes(limit, units=self.units)
        return f"{what} {size}" if self.limit_in_view() else f"▲ {what} {size} above"

    def heat_levels(self) -> tuple[float, float]:
        """The heat map's colour scale: 0 to the tile limit (or the hottest tile), the same
        for every side of a comparison."""
        if self.heat_scale is HeatScale.TILE_LIMIT:
            high = max(float(m.table.bytes_per_tile) for m in self.scale_group)
        else:
            high = max(float(m.tile_totals().max(initial=0)) for m in self.scale_group)
        return 0.0, max(high, 1.0)

    def heat_fraction(self, tile: int) -> float:
        """Where ``tile`` falls on the heat map's scale, 0 to 1 (clipped)."""
        low, high = self.heat_levels()
        return min(max((float(self.tile_totals()[tile]) - low) / (high - low), 0.0), 1.0)

    def ipu_boundaries(self) -> tuple[np.ndarray, list[str], np.ndarray]:
        """Lines between IPUs (x), and each IPU's label and centre, for the by-tile layouts in
        tile order; nothing when tiles are sorted or there is one IPU."""
        per_ipu, ipus = self.table.tiles_per_ipu, self.table.num_ipus
        tile_order = self.layout in (Layout.BY_TILE, Layout.BY_REGION) and not self.sort_by_memory
        if not tile_order or ipus < 2:
            return np.zeros(0), [], np.zeros(0)
        lines = np.arange(1, ipus) * per_ipu - 0.5
        centres = np.arange(ipus) * per_ipu + (per_ipu - 1) / 2
        return lines, [f"IPU {i}" for i in range(ipus)], centres

    def selected_positions(self) -> np.ndarray:
        """Bool per position: does it hold a selected tile (for highlighting)."""
        mask = np.zeros(self.table.num_tiles, dtype=bool)
        mask[self.selection] = True
        if self.layout is Layout.BY_IPU:
            return mask.reshape(self.table.num_ipus, -1).any(axis=1)
        return mask[self.order()] if self.sort_by_memory else mask

    def over_limit_count(self) -> int:
        return int(self.table.over_limit().size)

    def x_label(self) -> str:
        if self.layout is Layout.BY_IPU:
            return "IPU"
        if self.layout is Layout.HEAT_MAP:
            return "Tile on its IPU"
        return "Tiles, sorted by memory (rank)" if self.sort_by_memory else "Tile"

    # -- what the details panel and tooltips show ----------------------------------------
    def breakdown(self) -> Breakdown:
        """Bytes per category of the selection: per tile, or summed (all tiles if none)."""
        categories = self.categories
        if self.selection.size == 0:
            values = self.table.breakdown(np.arange(self.table.num_tiles), self.include_gaps)
            return Breakdown(["All tiles"], categories, values[:, None])
        if self.sum_selection or self.selection.size > self.MAX_TILE_COLUMNS:
            values = self.table.breakdown(self.selection, self.include_gaps)
            header = f"Sum of {self.selection.size} tiles"
            return Breakdown([header], categories, values[:, None])
        values = self.table.rows(self.include_gaps)[:, self.selection]
        return Breakdown([f"Tile {t}" for t in self.selection.tolist()], categories, values)

    def hover_text(self, position: int) -> str:
        """Tooltip of a position: tile (or IPU), its IPU, total and each category."""
        if not 0 <= position < self.num_positions:
            return ""
        values = self.values()[:, position]
        total = int(values.sum())
        units = self.units
        if self.layout is Layout.BY_IPU:
            limit = self.table.bytes_per_tile * self.table.tiles_per_ipu
            title = f"IPU {position}"
        else:
            tile = self.tile_of(position)
            limit = self.table.bytes_per_tile
            ipu, on_ipu = divmod(tile, self.table.tiles_per_ipu)
            title = f"Tile {tile} (IPU {ipu}, tile {on_ipu} on the IPU)"
        lines = [title, f"Total: {format_bytes(total, True, units)}, "
                 f"{format_percent(100 * total / limit)} of its memory"]  # fmt: skip
        for (label, _, _), value in zip(self.series(), values.tolist(), strict=True):
            if value:
                lines.append(f"  {label}: {format_bytes(value, True, units)}")
        return "\n".join(lines)

    def heat_map_hover_text(self, ipu: int, tile_on_ipu: int) -> str:
        per_ipu = self.table.tiles_per_ipu
        if not (0 <= ipu < self.table.num_ipus and 0 <= tile_on_ipu < per_ipu):
            return ""
        tile = ipu * per_ipu + tile_on_ipu
        total = int(self.tile_totals()[tile])
        share = format_percent(100 * total / self.table.bytes_per_tile)
        return f"Tile {tile} (IPU {ipu}, tile {tile_on_ipu} on the IPU)\nTotal: " + (
            f"{format_bytes(total, True, self.units)}, {share} of its memory"
        )

    def csv_rows(self) -> list[list[object]]:
        """Every tile's bytes per category (the Export's CSV), header first."""
        categories = self.categories
        header = ["tile", "ipu", *[c.label for c in categories], "total"]
        rows = self.table.rows(self.include_gaps)
        totals = rows.sum(axis=0)
        ipus = np.arange(self.table.num_tiles) // self.table.tiles_per_ipu
        body = np.vstack([np.arange(self.table.num_tiles), ipus, rows, totals]).T
        return [header, *body.tolist()]
