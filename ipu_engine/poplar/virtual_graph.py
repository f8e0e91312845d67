"""Virtual graphs: library ops confined to one IPU or a range of tiles.

Poplar's ``Graph::createVirtualGraph(lowerTile, upperTile)`` gives a view of the graph
over some tiles; ops built on it put their tensors and vertices there. Here the graph
is one object that every tensor belongs to, so a virtual graph is a scope on it:
``with on_ipu(graph, 1): popops.add(graph, a, b, prog)`` maps the output and places the
vertices on IPU 1's tiles, because library ops spread work over ``graph.tile_range``.
Operands held elsewhere are read over the exchange (across IPUs: the IPU-Links).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ipu_engine.common.arguments import integer_arg
from ipu_engine.common.errors import ShardError, TileMappingError
from ipu_engine.poplar.graph import Graph


@contextlib.contextmanager
def on_tiles(graph: Graph, tiles: range) -> Iterator[range]:
    """Library ops built inside spread their work over ``tiles`` only."""
    if not isinstance(tiles, range) or tiles.step != 1 or len(tiles) == 0:
        raise TileMappingError(f"a virtual graph needs a non-empty range of tiles, got {tiles!r}")
    num_tiles = graph.target.num_tiles
    if tiles.start < 0 or tiles.stop > num_tiles:
        raise TileMappingError(
            f"virtual graph tiles {tiles.start}..{tiles.stop - 1} are outside the target: "
            f"{graph.target.describe()} has tiles 0..{num_tiles - 1}"
        )
    graph._tile_ranges.append(tiles)
    try:
        yield tiles
    finally:
        graph._tile_ranges.pop()


def ipu_tiles(graph: Graph, ipu: int, what: str = "IPU") -> range:
    """The tiles of IPU ``ipu``, or a ShardError naming the index and the IPUs there are."""
    target = graph.target
    ipu = integer_arg(ipu, f"{what}: the IPU", ShardError)  # 0.5 is no IPU, not IPU 0
    if not 0 <= ipu < target.num_ipus:
        raise ShardError(
            f"{what} {ipu} is beyond the target's IPUs: {target.version} has "
            f"{target.num_ipus} IPU{'s' if target.num_ipus != 1 else ''} "
            f"(0..{target.num_ipus - 1})"
        )
    return range(ipu * target.tiles_per_ipu, (ipu + 1) * target.tiles_per_ipu)


@contextlib.contextmanager
def on_ipu(graph: Graph, ipu: int) -> Iterator[range]:
    """Library ops built inside work on IPU ``ipu`` only (a virtual graph over its tiles)."""
    with on_tiles(graph, ipu_tiles(graph, ipu)) as tiles:
        yield tiles


def create_virtual_graph(
    graph: Graph, lower_tile: int, upper_tile: int
) -> contextlib.AbstractContextManager[range]:
    """Poplar's ``createVirtualGraph(lowerTile, upperTile)`` as a scope: use it in ``with``."""
    what = "createVirtualGraph"
    lower = integer_arg(lower_tile, f"{what}: the lower tile", TileMappingError)
    upper = integer_arg(upper_tile, f"{what}: the upper tile", TileMappingError)
    return on_tiles(graph, range(lower, upper))
