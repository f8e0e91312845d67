"""Variable regions: the contiguous runs of each variable's elements that share a tile."""

from __future__ import annotations

import numpy as np

from ipu_engine.arrays import unique
from ipu_engine.graph import Graph
from ipu_engine.model.memory import VariableRegions


def variable_regions(graph: Graph) -> VariableRegions:
    """Every (variable, tile) run, in pool order, without a per-variable Python loop."""
    parts = []
    for elem_type, pool in graph.pools.items():
        tiles = pool.tile_of.data
        if tiles.size == 0:
            continue
        bases = np.asarray(pool.var_base, dtype=np.int64)
        changes = np.flatnonzero(tiles[1:] != tiles[:-1]) + 1
        cuts = unique(np.concatenate(([0], changes, bases[bases < tiles.size])))
        ends = np.concatenate((cuts[1:], [tiles.size]))
        var = pool.variables_of(cuts)
        base_of = np.asarray(
            [graph.variables[v].base for v in range(len(graph.variables))], dtype=np.int64
        )
        parts.append(
            (var, tiles[cuts], cuts - base_of[var], ends - cuts, (ends - cuts) * elem_type.size)
        )
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return VariableRegions(z.astype(np.int32), z.astype(np.int32), z, z, z)
    var, tile, start, elements, size = (np.concatenate(p) for p in zip(*parts, strict=True))
    return VariableRegions(var.astype(np.int32), tile.astype(np.int32), start, elements, size)
