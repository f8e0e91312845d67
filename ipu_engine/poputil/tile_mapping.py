"""PopLibs' poputil: tile mapping helpers, as ``poputil::mapTensorLinearly``."""

from __future__ import annotations

import numpy as np

from ipu_engine.common.arguments import count_arg, kind_error
from ipu_engine.common.errors import GraphError
from ipu_engine.poplar.graph import Graph, graph_arg
from ipu_engine.poplar.tensor import Tensor, tensor_arg


def linear_tile_array(
    num_elements: int,
    tiles: range,
    min_elements_per_tile: int = 1,
    grain_size: int = 1,
    api: str = "linear_tile_array",
) -> np.ndarray:
    """The tile of each element when spread evenly in order, in whole grains.

    As Poplar's ``calcLinearTileMapping``: elements are cut into grains; each tile in
    turn takes ``ceil(grains / tiles)`` grains (at least ``min_elements_per_tile``
    elements), so the first tiles are full and the last used one takes the rest.
    """
    num_elements = count_arg(num_elements, f"{api}: num_elements", limit=2**62)
    if not isinstance(tiles, range) or len(tiles) == 0:
        raise GraphError(kind_error(f"{api}: the tiles", "a non-empty range", tiles))
    # Poplar's are unsigned: a negative or zero grain is a mistake, not a 1 in disguise
    min_elements_per_tile = count_arg(min_elements_per_tile, f"{api}: min_elements_per_tile")
    grain_size = count_arg(grain_size, f"{api}: grain_size")
    if grain_size < 1:
        raise GraphError(f"{api}: grain_size must be at least 1, got {grain_size}")
    num_grains = -(-num_elements // grain_size)
    grains_per_tile = max(
        -(-num_grains // len(tiles)), -(-max(min_elements_per_tile, 1) // grain_size)
    )
    per_tile = grains_per_tile * grain_size
    used = -(-num_elements // per_tile) if num_elements else 0
    counts = np.full(used, per_tile, dtype=np.int64)
    if used:
        counts[-1] = num_elements - per_tile * (used - 1)
    return np.repeat(np.arange(tiles.start, tiles.start + used, dtype=np.int32), counts)


def map_tensor_linearly(
    graph: Graph,
    tensor: Tensor,
    min_elements_per_tile: int = 1,
    grain_size: int = 1,
) -> None:
    """Spread ``tensor`` evenly over every tile of the graph, in row-major order."""
    graph_arg(graph, "poputil::mapTensorLinearly")
    tensor_arg(tensor, "poputil::mapTensorLinearly: the tensor")
    tiles = linear_tile_array(
        tensor.num_elements, graph.tile_range, min_elements_per_tile, grain_size,
        "poputil::mapTensorLinearly",
    )  # fmt: skip
    graph.set_tile_mapping_array(tensor, tiles)


def calc_linear_tile_mapping(
    graph: Graph, tensor: Tensor, min_elements_per_tile: int = 1, grain_size: int = 1
) -> list[list[tuple[int, int]]]:
    """The mapping ``map_tensor_linearly`` would set, as per-tile interval lists."""
    graph_arg(graph, "poputil::calcLinearTileMapping")
    tensor_arg(tensor, "poputil::calcLinearTileMapping: the tensor")
    tiles = linear_tile_array(
        tensor.num_elements, graph.tile_range, min_elements_per_tile, grain_size,
        "poputil::calcLinearTileMapping",
    )  # fmt: skip
    mapping: list[list[tuple[int, int]]] = [[] for _ in range(graph.target.num_tiles)]
    if tiles.size:
        cuts = np.flatnonzero(np.diff(tiles)) + 1
        for b, e in zip(np.r_[0, cuts].tolist(), np.r_[cuts, tiles.size].tolist(), strict=True):
            mapping[int(tiles[b])].append((b, e))
    return mapping
