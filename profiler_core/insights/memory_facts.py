"""The memory facts of the Insights report: does it fit (and by how much, on how many
tiles), the fullest tiles with their category split, and a histogram of tile memory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler_core.analysis.memory import MemoryTable
from profiler_core.model.kinds import MemoryCategory

KIB = 1024


@dataclass(frozen=True)
class FitPanel:
    """Whether every tile fits its memory; over-limit tiles first, fullest first."""

    fits: bool
    bytes_per_tile: int
    num_tiles: int
    tiles_over: np.ndarray  # int64 tiles above the limit, fullest first
    excess_bytes: np.ndarray  # int64 bytes above the limit of each of ``tiles_over``
    fullest_tile: int
    fullest_bytes: int
    allow_out_of_memory: bool  # the report was made with debug.allowOutOfMemory

    @property
    def headroom_bytes(self) -> int:
        """Free bytes on the fullest tile (negative: how far it is over)."""
        return self.bytes_per_tile - self.fullest_bytes

    @property
    def worst_excess(self) -> int:
        return int(self.excess_bytes[0]) if self.excess_bytes.size else 0

    @property
    def fullest_percent(self) -> float:
        return 100.0 * self.fullest_bytes / self.bytes_per_tile

    def sentence(self) -> str:
        """``Does not fit: 1,470 of 1,472 tiles are over ...`` or ``Fits: ... headroom``."""
        if self.fits:
            return (
                f"Fits: the fullest tile, {self.fullest_tile}, uses {self.fullest_bytes:,} of "
                f"{self.bytes_per_tile:,} bytes ({self.fullest_percent:.1f}%); "
                f"{self.headroom_bytes:,} bytes of headroom."
            )
        return (
            f"Does not fit: {len(self.tiles_over):,} of {self.num_tiles:,} tiles are over their "
            f"{self.bytes_per_tile:,} bytes; the fullest, tile {self.fullest_tile}, by "
            f"{self.worst_excess:,} bytes ({self.fullest_percent:.1f}%)."
        )


def fit_panel(table: MemoryTable, allow_out_of_memory: bool = False) -> FitPanel:
    total = table.total(True)
    over = table.over_limit(100.0)
    over = over[np.lexsort((over, -total[over]))]
    fullest = int(np.lexsort((np.arange(len(total)), -total))[0]) if len(total) else 0
    return FitPanel(
        fits=over.size == 0,
        bytes_per_tile=table.bytes_per_tile,
        num_tiles=table.num_tiles,
        tiles_over=over.astype(np.int64),
        excess_bytes=(total[over] - table.bytes_per_tile).astype(np.int64),
        fullest_tile=fullest,
        fullest_bytes=int(total[fullest]) if len(total) else 0,
        allow_out_of_memory=allow_out_of_memory,
    )


@dataclass(frozen=True)
class TopTiles:
    """The fullest tiles, fullest first, with their bytes per category."""

    tiles: np.ndarray  # int64
    total: np.ndarray  # int64
    by_category: np.ndarray  # int64 (tiles, categories) in MemoryCategory order
    bytes_per_tile: int

    def __len__(self) -> int:
        return len(self.tiles)

    def split(self, row: int) -> list[tuple[MemoryCategory, int]]:
        """Tile ``row``'s non-zero categories, largest first."""
        values = self.by_category[row]
        order = np.lexsort((np.arange(len(values)), -values))
        return [(MemoryCategory(int(c)), int(values[c])) for c in order if values[c] > 0]


def top_tiles(table: MemoryTable, count: int = 5) -> TopTiles:
    total = table.total(True)
    order = np.lexsort((np.arange(len(total)), -total))[:count]
    return TopTiles(
        tiles=order.astype(np.int64),
        total=total[order].astype(np.int64),
        by_category=table.by_category[:, order].T.astype(np.int64),
        bytes_per_tile=table.bytes_per_tile,
    )


@dataclass(frozen=True)
class Histogram:
    """How many tiles hold how much memory: ``counts[i]`` tiles in [edges[i], edges[i+1])
    KiB (the last bin closed), with the tile limit in KiB."""

    edges_kib: np.ndarray  # float64 (bins + 1,)
    counts: np.ndarray  # int64 (bins,)
    limit_kib: float

    @property
    def bin_kib(self) -> float:
        return float(self.edges_kib[1] - self.edges_kib[0]) if len(self.edges_kib) > 1 else 0.0


_NICE_STEPS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


def memory_histogram(table: MemoryTable, bins: int = 48) -> Histogram:
    """Bins of a round number of KiB from 0 past the fullest tile and the limit, about
    ``bins`` of them, so the limit's position reads off the axis."""
    total_kib = table.total(True) / KIB
    limit_kib = table.bytes_per_tile / KIB
    top = max(float(total_kib.max(initial=0.0)), limit_kib)
    step = next((s for s in _NICE_STEPS if top / s <= bins), _NICE_STEPS[-1])
    count = int(np.floor(top / step)) + 1
    edges = np.arange(count + 1, dtype=np.float64) * step
    counts, _ = np.histogram(total_kib, bins=edges)
    return Histogram(edges_kib=edges, counts=counts.astype(np.int64), limit_kib=limit_kib)
