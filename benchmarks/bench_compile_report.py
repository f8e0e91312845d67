"""Compile + one run + report write for a graph of about a million vertices over 4 IPUs:
vertices per second, and bytes of profile.pop per vertex, measured in one run."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from benchmarks._timing import report
from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, popops, poputil
from ipu_engine.popops.expr import _1, _2

NUM_IPUS = 4
ELEMENTS_PER_TILE = 32


def build(num_ops: int) -> tuple:
    device = IPUModel("ipu2", num_ipus=NUM_IPUS).create_device()
    graph = Graph(device.target)
    n = device.target.num_tiles * ELEMENTS_PER_TILE
    x = graph.add_variable(FLOAT, [n], "x")
    poputil.map_tensor_linearly(graph, x)
    graph.create_host_write("x", x)
    prog = Sequence(name="million")
    t = x
    for i in range(num_ops):  # each op: one vertex on every tile
        t = popops.map(graph, _1 * 0.5 + _2, [t, x], prog, f"op{i}")
    graph.create_host_read("out", t)
    return device, graph, prog


def main() -> None:
    tiles = IPUModel("ipu2", num_ipus=NUM_IPUS).create_device().target.num_tiles
    num_ops = -(-1_000_000 // tiles)
    t0 = time.perf_counter()
    device, graph, prog = build(num_ops)
    built = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        options = {"autoReport.all": "true", "autoReport.directory": tmp}
        t1 = time.perf_counter()
        engine = Engine(graph, prog, options=options)  # compile + graph profile written
        t2 = time.perf_counter()
        engine.load(device)
        engine.run(0)  # the execution profile is rewritten after the run
        t3 = time.perf_counter()
        size = (Path(engine.report_folder) / "profile.pop").stat().st_size
    vertices = graph.num_vertices
    total = t3 - t1
    print(
        f"{vertices:,} vertices in {num_ops} compute sets over {tiles} tiles: build {built:.1f} s "
        f"(not counted), compile + report {t2 - t1:.1f} s, load + run + report {t3 - t2:.1f} s"
    )
    rate = vertices / total
    report(
        "vertices per second (compile + run + report write)",
        rate,
        "vertex/s",
        ">= 100,000",
        rate >= 100_000,
    )
    per_vertex = size / vertices
    report("bytes of profile.pop per vertex", per_vertex, "B/vertex", "<= 64", per_vertex <= 64)


if __name__ == "__main__":
    main()
