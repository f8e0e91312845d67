"""Memory per tile by category: what each tile must hold for the compiled program.

Variables are laid out per tile as their regions (contiguous runs of a variable's
elements), each aligned to ``DATA_ALIGNMENT`` bytes (the padding is the alignment gap).
Always-live variables and constants each keep their own space; not-always-live
variables share one area as big as the most of them live at once on that tile. Code,
vertex state and descriptors, exchange code and stacks follow ``constants.py``. Exchange
buffers hold what a compute set receives from other tiles before it runs (and remote
outputs until they are sent): the largest such set per tile. Data
fills the interleaved region first; when a tile's data spills over, the space left at
the end of the interleaved region that no spilled allocation fits is a region gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from profiler_core.model.kinds import MemoryCategory as M


@dataclass(frozen=True)
class TileMemory:
    by_category: np.ndarray  # int64 (categories, tiles)
    interleaved: np.ndarray  # int64 (tiles,)

    @property
    def total(self) -> np.ndarray:
        return self.by_category.sum(axis=0)


@dataclass(frozen=True)
class VariableTileBytes:
    """Bytes of each variable on each tile it is mapped to (a pair may appear more than
    once; sums over pairs are the sums over regions)."""

    var: np.ndarray  # int64
    tile: np.ndarray  # int64
    bytes: np.ndarray  # int64 elements x element size
    padded: np.ndarray  # int64 the same regions each aligned to DATA_ALIGNMENT


def aligned(size: np.ndarray, alignment: int = C.DATA_ALIGNMENT) -> np.ndarray:
    return -(-size // alignment) * alignment


def per_tile(tiles: np.ndarray, values: np.ndarray, num_tiles: int) -> np.ndarray:
    if tiles.size == 0:
        return np.zeros(num_tiles, dtype=np.int64)
    return np.bincount(tiles.astype(np.int64), weights=values, minlength=num_tiles).astype(np.int64)


@dataclass(frozen=True)
class VariableRegions:
    """Every (variable, tile) region; start and elements are int32 unless a variable has
    2**31 elements or more (then int64)."""

    var: np.ndarray  # int32
    tile: np.ndarray  # int32
    start: np.ndarray  # first flat element
    elements: np.ndarray


def data_categories(
    shares: VariableTileBytes,
    is_constant: np.ndarray,
    always_live: np.ndarray,
    nal_peak: np.ndarray,
    num_tiles: int,
) -> dict[M, np.ndarray]:
    """Constants, always-live and not-always-live bytes and alignment gaps per tile, from
    the regions' bytes summed per (variable, tile) (``regions.variable_tile_bytes``)."""
    padded, size, tile = shares.padded, shares.bytes, shares.tile
    constant = is_constant[shares.var]
    live = always_live[shares.var] & ~constant
    nal = ~always_live[shares.var]
    nal_aligned = aligned(nal_peak)
    gaps = per_tile(tile, padded - size, num_tiles)
    # the shared not-always-live area is padded once per tile, not per variable
    nal_padding = per_tile(tile[nal], padded[nal] - size[nal], num_tiles)
    return {
        M.CONSTANTS: per_tile(tile[constant], size[constant], num_tiles),
        M.ALWAYS_LIVE_VARIABLES: per_tile(tile[live], size[live], num_tiles),
        M.NOT_ALWAYS_LIVE_VARIABLES: nal_peak,
        M.ALIGNMENT_GAPS: gaps - nal_padding + (nal_aligned - nal_peak),
    }


def region_gaps(
    regions: VariableRegions,
    element_size: np.ndarray,
    always_live: np.ndarray,
    nal_peak: np.ndarray,
    data_total: np.ndarray,
    interleaved_bytes: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(region gap, bytes in the interleaved region) per tile.

    On a tile whose data exceeds the interleaved region, allocations (each always-live
    region, and the shared not-always-live area) are placed largest first; the space
    left where the first one no longer fits stays empty unless a smaller spilled
    allocation fits in it.
    """
    num_tiles = data_total.size
    gap = np.zeros(num_tiles, dtype=np.int64)
    interleaved = np.minimum(data_total, interleaved_bytes)
    spilling = np.flatnonzero(data_total > interleaved_bytes)
    if spilling.size == 0:
        return gap, interleaved
    mask = np.isin(regions.tile, spilling) & always_live[regions.var]
    var = regions.var[mask]
    region_bytes = regions.elements[mask].astype(np.int64) * element_size[var]
    tiles = np.concatenate([regions.tile[mask].astype(np.int64), spilling])
    sizes = np.concatenate([aligned(region_bytes), aligned(nal_peak[spilling])])
    order = np.lexsort((-sizes, tiles))
    tiles, sizes = tiles[order], sizes[order]
    ends = np.cumsum(sizes)
    tile_start = np.searchsorted(tiles, tiles, side="left")
    end_in_tile = ends - np.concatenate(([0], ends))[tile_start]
    spilled = np.flatnonzero(end_in_tile > interleaved_bytes)
    none = np.iinfo(np.int64).max
    first_spill = np.full(num_tiles, none, dtype=np.int64)
    np.minimum.at(first_spill, tiles[spilled], spilled)
    smallest_spilled = np.full(num_tiles, none, dtype=np.int64)
    np.minimum.at(smallest_spilled, tiles[spilled], sizes[spilled])
    has = first_spill != none
    placed = np.zeros(num_tiles, dtype=np.int64)
    placed[has] = end_in_tile[first_spill[has]] - sizes[first_spill[has]]
    remainder = np.where(has, interleaved_bytes - placed, 0)
    gap = np.where(has & (remainder < smallest_spilled), remainder, 0)
    return gap, np.where(has, interleaved_bytes - gap, interleaved)
