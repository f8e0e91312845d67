"""Poplar tutorial 6 (matrix-vector multiplication optimisation), ported to ipu_engine as
a user would: rows split into segments, a DotProductVertex per (row, segment), then a
ReduceVertex per row; the split is chosen by the tutorial's own cycle estimate.

    python resources/examples/tutorial6_matrix_vector.py 10000 1000 [--device model-ipu2]

``--device ipu`` models the hardware profile (``ipu_hardware``) instead of the IPU Model.
"""

from __future__ import annotations

import argparse

import numpy as np

from ipu_engine import (
    FLOAT,
    Copy,
    EdgeColumn,
    Engine,
    Execute,
    Graph,
    Input,
    IPUModel,
    Output,
    Sequence,
    Vertex,
    ipu_hardware,
)


class DotProductVertex(Vertex):
    a = Input(FLOAT)
    b = Input(FLOAT)
    out = Output(FLOAT, scalar=True)

    def compute(self):
        self.out = float(np.dot(self.a, self.b))


class ReduceVertex(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT, scalar=True)

    def compute(self):
        self.out = float(self.in_.sum())


def ceil_div(a: int, b: int) -> int:
    return (a + b - 1) // b


def estimate_cycles(graph: Graph, num_rows: int, num_cols: int, split: int) -> dict[str, int]:
    """The tutorial's estimate of the two compute sets and their exchanges for a split."""
    target = graph.target
    num_tiles, workers = target.num_tiles, target.num_worker_contexts
    bytes_per_cycle = target.exchange_bytes_per_cycle
    max_vertices = max(ceil_div(num_rows * split, num_tiles), 1)
    cycles_per_vertex = 5 + (ceil_div(num_cols, split) + 1) // 2
    compute = ceil_div(max_vertices, workers) * workers * cycles_per_vertex
    exchange = ceil_div(max_vertices, num_rows) * ceil_div(num_cols, split) * 4 // bytes_per_cycle
    max_reduce = max(ceil_div(num_rows, num_tiles), 1)
    reduce_compute = ceil_div(max_reduce, workers) * workers * (5 + (split + 1) // 2)
    reduce_exchange = max_reduce * split * 4 // bytes_per_cycle
    return {
        "total": compute + exchange + reduce_compute + reduce_exchange,
        "compute": compute,
        "exchange": exchange,
        "reduce exchange": reduce_exchange,
        "reduce compute": reduce_compute,
    }


def optimal_split(graph: Graph, num_rows: int, num_cols: int) -> int:
    costs = [
        (estimate_cycles(graph, num_rows, num_cols, s)["total"], s) for s in range(1, num_cols)
    ]
    return min(costs)[1]


def build_multiply_program(graph, matrix, vector, out) -> tuple[Sequence, int]:
    """The tutorial's ``buildMultiplyProgram``. Its loops add one vertex per (segment, row)
    and map each row segment; here the same vertices, tiles, mappings and estimates are
    made in bulk (``add_vertex_block``), as the tutorial's 80,000 single calls are slow in
    Python."""
    num_rows, num_cols = matrix.dim(0), matrix.dim(1)
    split = optimal_split(graph, num_rows, num_cols)
    partials = graph.add_variable(FLOAT, [num_rows, split], "partials")
    num_tiles = graph.target.num_tiles
    for i in range(num_cols):  # the input vector spread over all tiles
        graph.set_tile_mapping(vector[i], i * num_tiles // num_cols)

    # every (segment i, row) pair, segment-major as the tutorial's loops run
    bounds = np.arange(split + 1) * num_cols // split
    segment = np.repeat(np.arange(split), num_rows)
    row = np.tile(np.arange(num_rows), split)
    keep = bounds[segment] != bounds[segment + 1]
    segment, row = segment[keep], row[keep]
    begin, end = bounds[segment], bounds[segment + 1]
    tile = (segment * num_rows + row) * num_tiles // (split * num_rows)
    matrix_tiles = np.empty((num_rows, num_cols), dtype=np.int32)
    for i in range(split):  # setTileMapping(matrix[row].slice(begin, end), tile)
        mine = segment == i
        matrix_tiles[row[mine], bounds[i] : bounds[i + 1]] = tile[mine][:, None]
    graph.set_tile_mapping_array(matrix, matrix_tiles.reshape(-1))
    partial_tiles = np.empty((num_rows, split), dtype=np.int32)
    partial_tiles[row, segment] = tile
    graph.set_tile_mapping_array(partials, partial_tiles.reshape(-1))

    mul_cs = graph.add_compute_set("mulCS")
    zeros, ones = np.zeros_like(row), np.ones_like(row)
    block = graph.add_vertex_block(
        mul_cs,
        DotProductVertex,
        tile,
        {
            "a": EdgeColumn.from_blocks(matrix, row, row + 1, begin, end),
            "b": EdgeColumn.from_blocks(vector.reshape([1, num_cols]), zeros, ones, begin, end),
            "out": EdgeColumn.from_blocks(partials, row, row + 1, segment, segment + 1),
        },
    )
    block.perf_estimate = (5 + ((end - begin) + 1) // 2).astype(np.int64)

    reduce_cs = graph.add_compute_set("reduceCS")
    rows = np.arange(num_rows)
    reduce_tiles = (rows * num_tiles // num_rows).astype(np.int32)
    graph.set_tile_mapping_array(out, reduce_tiles)
    block = graph.add_vertex_block(
        reduce_cs,
        ReduceVertex,
        reduce_tiles,
        {
            "in": EdgeColumn.from_blocks(partials, rows, rows + 1, rows * 0, rows * 0 + split),
            "out": EdgeColumn.from_blocks(
                out.reshape([num_rows, 1]), rows, rows + 1, rows * 0, rows * 0 + 1
            ),
        },
    )
    block.perf_estimate = np.full(num_rows, 5 + (split + 1) // 2, dtype=np.int64)
    return Sequence(Execute(mul_cs), Execute(reduce_cs)), split


def make_device(device: str):
    if device == "ipu":
        return ipu_hardware("ipu2").create_device()
    model = IPUModel(device.removeprefix("model-"))
    model.minIPUSyncDelay = 0  # as the tutorial: "more simplistic" exchange timing
    model.relativeSyncDelay = IPUModel.RelativeSyncDelayType.NO_DELAY
    return model.create_device()


def run(num_rows: int, num_cols: int, device: str = "model-ipu2") -> tuple[Engine, int]:
    """Build, run and check the tutorial's program: (the engine, the split chosen)."""
    dev = make_device(device)
    graph = Graph(dev.target)
    graph.add_codelets(DotProductVertex, ReduceVertex)
    matrix = graph.add_variable(FLOAT, [num_rows, num_cols], "matrix")
    vector = graph.add_variable(FLOAT, [num_cols], "inputVector")
    out = graph.add_variable(FLOAT, [num_rows], "outputVector")
    multiply, split = build_multiply_program(graph, matrix, vector, out)
    in_v = graph.add_host_to_device_fifo("inputVector", FLOAT, num_cols)
    in_m = graph.add_host_to_device_fifo("inputMatrix", FLOAT, num_cols * num_rows)
    out_s = graph.add_device_to_host_fifo("out", FLOAT, num_rows)
    program = Sequence(Copy(in_v, vector), Copy(in_m, matrix), multiply, Copy(out, out_s))
    engine = Engine(graph, program)
    engine.load(dev)
    h_input = np.arange(num_cols, dtype=np.float32)
    h_matrix = np.outer(np.arange(num_rows), np.arange(num_cols)).astype(np.float32)
    h_out = np.zeros(num_rows, dtype=np.float32)
    engine.connect_stream("inputVector", h_input)
    engine.connect_stream("inputMatrix", h_matrix.reshape(-1))
    engine.connect_stream("out", h_out)
    engine.run()
    expected = h_matrix.astype(np.float64) @ h_input
    error = np.abs(h_out - expected) / np.maximum(np.abs(expected), 1)
    if error.max() > 1e-5:
        raise AssertionError(f"output {int(error.argmax())}: relative error {error.max():.2e}")
    return engine, split


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("cols", type=int)
    parser.add_argument(
        "--device", default="model-ipu2", choices=["model-ipu1", "model-ipu2", "ipu"]
    )
    args = parser.parse_args(argv)
    print(f"Multiplying matrix of size {args.rows}x{args.cols} by vector of size {args.cols}")
    engine, split = run(args.rows, args.cols, args.device)
    cost = estimate_cycles(engine.graph, args.rows, args.cols, split)
    print(f"Best split chosen: colsAxisSplit={split}, estimate {cost}")
    print("Multiplication result OK")
    engine.print_profile_summary()


if __name__ == "__main__":
    main()
