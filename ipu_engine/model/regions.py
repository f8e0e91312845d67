"""Variable regions: the contiguous runs of each variable's elements that share a tile."""

from __future__ import annotations

import numpy as np

from ipu_engine.graph import Graph
from ipu_engine.model.memory import VariableRegions


def variable_regions(graph: Graph) -> VariableRegions:
    """Every (variable, tile) run, in pool order: the pools' tile-mapping intervals."""
    parts = []
    for elem_type, pool in graph.pools.items():
        if pool.size == 0:
            continue
        var, start, elements, tile = pool.tiles.variable_intervals()
        var_ids = np.asarray(pool.var_id, dtype=np.int64)[var]
        parts.append((var_ids, tile, start, elements, elements * elem_type.size))
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return VariableRegions(z.astype(np.int32), z.astype(np.int32), z, z, z)
    var, tile, start, elements, size = (np.concatenate(p) for p in zip(*parts, strict=True))
    return VariableRegions(var.astype(np.int32), tile.astype(np.int32), start, elements, size)
