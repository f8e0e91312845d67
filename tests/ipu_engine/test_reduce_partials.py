"""The partials-major Reduce codelet (the second stage of matmul, conv and gather) runs
all its vertices in one numpy pass: vertices with different partial counts, -0.0 kept."""

from __future__ import annotations

import numpy as np

from ipu_engine import FLOAT, Graph, IPUModel, Sequence
from ipu_engine.codelets.reduce import reduce_codelet
from ipu_engine.program import Execute
from ipu_engine.vertices import EdgeColumn
from tests.ipu_engine.conftest import run_program


def test_vertices_with_different_partial_counts() -> None:
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    partials = graph.add_variable(FLOAT, [13], "partials")
    out = graph.add_variable(FLOAT, [5], "out")
    for t in (partials, out):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("partials", partials)
    graph.create_host_read("out", out)
    cs = graph.add_compute_set("Reduce")
    # vertex 0: 2 outputs x 3 partials (elements 0..5); vertex 1: 3 outputs x 2 partials
    # (6..11), scaled by 0.5; element 12 is not read
    edges = {
        "in": EdgeColumn(partials.flat_addr()[:12], np.array([0, 6, 12])),
        "out": EdgeColumn(out.flat_addr(), np.array([0, 2, 5])),
    }
    codelet = reduce_codelet("ADD", FLOAT, partials_major=True)
    block = graph.add_vertex_block(cs, codelet, np.array([0, 1]), edges)
    block.state["numPartials"][:] = [3, 2]
    block.state["scale"][:] = [1.0, 0.5]
    prog = Sequence()
    prog.add(Execute(cs))
    values = np.array([1, 2, 10, 20, 100, 200, 1, 2, 3, 10, 20, 30, 7], dtype=np.float32)
    values[[0, 2, 4]] = -0.0  # output 0 sums three negative zeros
    _, got = run_program(graph, device, prog, {"partials": values}, ["out"])
    # by hand: vertex 0 sums partials-major pairs; vertex 1 sums (1+10, 2+20, 3+30) / 2
    assert got["out"].tolist() == [0.0, 222.0, 5.5, 11.0, 16.5]
    assert np.signbit(got["out"][0])
