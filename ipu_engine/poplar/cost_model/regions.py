"""Variable regions: the contiguous runs of each variable's elements that share a tile, and
their bytes summed per (variable, tile) -- what the memory layout needs of them.

A model's regions number in the millions (ResNet-50's activations: ten million), so they
are kept in int32 columns, and the layout works on the per-(variable, tile) sums (a few
hundred thousand) instead of one row per region.
"""

from __future__ import annotations

import numpy as np

from ipu_engine.poplar.cost_model.memory import VariableRegions, VariableTileBytes, aligned
from ipu_engine.poplar.graph import Graph

_CHUNK = 1 << 20  # regions summed at a time: bounds the sums' working arrays


def variable_regions(graph: Graph) -> VariableRegions:
    """Every (variable, tile) run, in pool order: the pools' tile-mapping intervals."""
    parts = []
    for pool in graph.pools.values():
        if pool.size == 0:
            continue
        var, start, elements, tile = pool.tiles.variable_intervals()
        var_ids = np.asarray(pool.var_id, dtype=np.int32)[var]
        del var
        parts.append((var_ids, tile, start, elements))
    if not parts:
        z = np.zeros(0, dtype=np.int32)
        return VariableRegions(z, z.copy(), z.copy(), z.copy())
    if len(parts) == 1:
        return VariableRegions(*parts[0])
    columns = [np.concatenate(column) for column in zip(*parts, strict=True)]
    return VariableRegions(*columns)


def variable_tile_bytes(
    regions: VariableRegions, element_size: np.ndarray, num_tiles: int
) -> VariableTileBytes:
    """The regions' bytes (and aligned bytes) summed per (variable, tile), a chunk of
    regions at a time; ``element_size`` is each variable's element size in bytes."""
    parts = []
    for lo in range(0, regions.var.size, _CHUNK):
        var = regions.var[lo : lo + _CHUNK].astype(np.int64)
        tile = regions.tile[lo : lo + _CHUNK]
        size = regions.elements[lo : lo + _CHUNK] * element_size[var]
        key = var * num_tiles + tile
        order = np.argsort(key, kind="stable")
        key = key[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        size = size[order]
        parts.append(
            (
                key[first] // num_tiles,
                key[first] % num_tiles,
                np.add.reduceat(size, first),
                np.add.reduceat(aligned(size), first),
            )
        )
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return VariableTileBytes(z, z, z, z)
    return VariableTileBytes(*(np.concatenate(p) for p in zip(*parts, strict=True)))
