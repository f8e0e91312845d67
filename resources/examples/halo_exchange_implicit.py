"""A public Poplar program with published IPU Model figures, ported to ipu_engine as a user
would: the "implicit" halo-exchange strategy of thorbenlouw/lbm-graphcore
(main/HaloRegionApproaches.cpp, experiments/halo-exchange-approaches/results.txt, 2020):
a grid of 100x100 float blocks, one per tile of a Mk1 IPU Model (1216 tiles as 608 rows of
2), each block averaged over its Moore neighbourhood by an ``ExtraHalosApproach`` vertex
that reads its neighbours' edges (n, s, e, w rows and columns, four corners) where they
live -- the exchange brings them -- into another grid, and back, ``-n`` times.

    python resources/examples/halo_exchange_implicit.py -n 10 -b 100

As the original, program 0 fills the grid and is not run; program 1 (the iterations) is
run once and its execution summary printed. Every vertex has the cycle estimate 100, as
its ``setCycleEstimate`` says, so compute is known exactly and the rest is the model's
exchange and sync.
"""

from __future__ import annotations

import argparse

import numpy as np

from ipu_engine import FLOAT, Engine, Execute, Graph, Input, IPUModel, Output, Repeat, Sequence
from ipu_engine import Vertex as _Vertex

TILES_IN_IPU_COL = 2  # NumTilesInIpuCol
ESTIMATE = 100  # graph.setCycleEstimate(v, 100) for every vertex
ENGINE_OPTIONS = {"debug.instrument": "true", "debug.instrumentCompute": "true"}


class Fill(_Vertex):
    """``Fill<float>``: every element of ``result`` set to ``val``."""

    type_name = "Fill<float>"
    result = Output(FLOAT)
    val = Input(FLOAT, scalar=True)

    def compute(self):
        self.result[:] = self.val


class ExtraHalosApproach(_Vertex):
    """``ExtraHalosApproach<float>``: the 3x3 mean of a block, its halo read from the
    neighbours' edges (zeros at the grid's border)."""

    type_name = "ExtraHalosApproach<float>"
    in_ = Input(FLOAT)
    n = Input(FLOAT)
    s = Input(FLOAT)
    e = Input(FLOAT)
    w = Input(FLOAT)
    nw = Input(FLOAT, scalar=True)
    ne = Input(FLOAT, scalar=True)
    sw = Input(FLOAT, scalar=True)
    se = Input(FLOAT, scalar=True)
    out = Output(FLOAT)

    def compute(self):
        b = round(len(self.in_) ** 0.5)
        grid = np.zeros((b + 2, b + 2), dtype=np.float32)
        grid[1:-1, 1:-1] = np.reshape(self.in_, (b, b))
        grid[0, 2 : b + 1] = self.n[: b - 1]
        grid[b + 1, 1:b] = self.s[: b - 1]
        grid[2 : b + 1, b + 1] = self.e[: b - 1]
        grid[2 : b + 1, 0] = self.w[: b - 1]
        grid[0, 0], grid[0, b + 1], grid[b + 1, 0], grid[b + 1, b + 1] = (
            self.nw, self.ne, self.sw, self.se,
        )  # fmt: skip
        mean = sum(grid[i : i + b, j : j + b] for i in range(3) for j in range(3)) / 9
        self.out[:] = mean.reshape(-1)


def _block(t, tile: int, block: int, dr: int = 0, dc: int = 0):
    """The block of grid ``t`` of the tile ``dr`` rows and ``dc`` columns from ``tile``."""
    r, c = tile // TILES_IN_IPU_COL + dr, tile % TILES_IN_IPU_COL + dc
    return t.slice([r * block, c * block], [(r + 1) * block, (c + 1) * block])


def _halos(t, tile: int, block: int, rows: int, vector, scalar) -> dict:
    """The halo a tile's vertex reads from its neighbours' blocks of ``t`` (the original's
    n, s, e, w, nw, ne, sw, se lambdas): a neighbour's edge, or zeros at the border."""
    row, col = tile // TILES_IN_IPU_COL, tile % TILES_IN_IPU_COL
    up, down, left, right = row > 0, row < rows - 1, col > 0, col < TILES_IN_IPU_COL - 1
    last = block - 1

    def at(dr: int, dc: int = 0):
        return _block(t, tile, block, dr, dc)

    return {
        "n": at(-1)[last, 1:] if up else vector,
        "s": at(1)[0, :last] if down else vector,
        "e": at(0, 1)[1:, 0] if right else vector,
        "w": at(0, -1)[1:, last] if left else vector,
        "nw": at(-1, -1)[last, last] if left and up else scalar,
        "ne": at(-1, 1)[last, 0] if right and up else scalar,
        "sw": at(1, -1)[0, last] if left and down else scalar,
        "se": at(1, 1)[0, 0] if right and down else scalar,
    }


def build(graph: Graph, block: int, iterations: int) -> list:
    """The strategy's graph and its two programs (fill; the iterations)."""
    num_tiles = graph.target.num_tiles
    rows = num_tiles // TILES_IN_IPU_COL
    shape = [rows * block, TILES_IN_IPU_COL * block]
    grids = graph.add_variable(FLOAT, shape, "in"), graph.add_variable(FLOAT, shape, "out")
    init = graph.add_compute_set("init")
    for tile in range(num_tiles):
        for grid in grids:
            graph.set_tile_mapping(_block(grid, tile, block), tile)
        result = _block(grids[0], tile, block).flatten()
        value = graph.add_constant(FLOAT, [], float(tile + 1))  # Poplar's {"val", value}
        graph.set_tile_mapping(value, tile)
        fill = graph.add_vertex(init, Fill, result=result, val=value)
        graph.set_perf_estimate(fill, ESTIMATE)
        graph.set_tile_mapping(fill, tile)

    zeros = np.zeros(block, dtype=np.float32)
    computes = [graph.add_compute_set(f"implicitCompute{i}") for i in (1, 2)]
    for tile in range(num_tiles):
        row, col = tile // TILES_IN_IPU_COL, tile % TILES_IN_IPU_COL
        vector = scalar = None
        if row in (0, rows - 1) or col in (0, TILES_IN_IPU_COL - 1):  # a border tile
            vector = graph.add_constant(FLOAT, [block], zeros, "{0...}")
            scalar = graph.add_constant(FLOAT, [], 0.0, "0")
            graph.set_tile_mapping(vector, tile)
            graph.set_tile_mapping(scalar, tile)
        for cs, (src, dst) in zip(computes, (grids, grids[::-1]), strict=True):
            fields = {
                "in": _block(src, tile, block).flatten(),
                "out": _block(dst, tile, block).flatten(),
                **_halos(src, tile, block, rows, vector, scalar),
            }
            vertex = graph.add_vertex(cs, ExtraHalosApproach, fields)
            graph.set_perf_estimate(vertex, ESTIMATE)
            graph.set_tile_mapping(vertex, tile)
    step = Sequence(Execute(computes[0]), Execute(computes[1]))
    return [Sequence(Execute(init), name="fill"), Repeat(iterations, step, name="iterations")]


def run(iterations: int = 10, block: int = 100) -> Engine:
    """Build on a Mk1 IPU Model (as ``utils::getIpuModel``: 1216 tiles, other settings as
    the model's defaults), compile, load and run program 1 once."""
    device = IPUModel("ipu1").create_device()
    graph = Graph(device.target)
    engine = Engine(graph, build(graph, block, iterations), options=ENGINE_OPTIONS)
    engine.load(device)
    engine.run(1)
    return engine


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--num-iters", type=int, default=10)
    parser.add_argument("-b", "--block-size", type=int, default=100)
    args = parser.parse_args(argv)
    run(args.num_iters, args.block_size).print_profile_summary()


if __name__ == "__main__":
    main()
