"""``batch.output(name)``: an output a codelet writes whole, without its old values read,
stored to memory whether its edges are a view, runs gathered, or irregular addresses."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, Graph, IPUModel, Sequence, poputil
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.vertex import Input, Output, Vertex, VertexBatch
from ipu_engine.poplar.vertices import EdgeColumn
from tests.ipu_engine.conftest import run_program


class NegateWhole(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT)

    @classmethod
    def compute_batch(cls, batch: VertexBatch) -> None:
        np.negative(batch["in"], out=batch.output("out"))


def _out_edges(layout: str) -> tuple[EdgeColumn, np.ndarray]:
    """Two vertices' output edges over y[0:10] (8 elements): their columns and the
    addresses they name, in order."""
    if layout == "view":  # y[1:9], one run
        addr = np.arange(1, 9)
        return EdgeColumn(
            None,
            np.array([0, 4, 8]),
            runs=Runs(np.array([1, 5]), np.array([4, 4])),
            run_offsets=np.array([0, 1, 2]),
        ), addr
    if layout == "runs":  # uneven runs: gathered, scattered back
        runs = Runs(np.array([9, 0, 4, 2]), np.array([1, 2, 3, 2]))
        return EdgeColumn(
            None, np.array([0, 3, 8]), runs=runs, run_offsets=np.array([0, 2, 4])
        ), runs.addresses()
    addr = np.array([7, 3, 9, 0, 5, 1, 8, 2])  # irregular addresses
    return EdgeColumn(addr.copy(), np.array([0, 3, 8])), addr


@pytest.mark.parametrize("layout", ["view", "runs", "addresses"])
def test_an_output_written_whole_reaches_memory(layout: str) -> None:
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [8], "x")
    y = graph.add_variable(FLOAT, [10], "y")
    for t in (x, y):
        poputil.map_tensor_linearly(graph, t)
    graph.create_host_write("x", x)
    graph.create_host_write("y0", y)
    graph.create_host_read("y", y)
    out_col, addr = _out_edges(layout)
    x0, y0 = x.pool_range()[0], y.pool_range()[0]
    if out_col.runs is not None:
        out_col.runs.start[:] += y0
    else:
        out_col._addr[:] += y0
    in_col = EdgeColumn(
        None,
        np.array([0, 3, 8]),
        runs=Runs(np.array([x0, x0 + 3]), np.array([3, 5])),
        run_offsets=np.array([0, 1, 2]),
    )
    cs = graph.add_compute_set("negate")
    graph.add_vertex_block(cs, NegateWhole, np.array([0, 1]), {"in": in_col, "out": out_col})
    values = np.arange(8, dtype=np.float32) + 1
    before = np.full(10, 100, dtype=np.float32)
    _, out = run_program(graph, device, Sequence(Execute(cs)), {"x": values, "y0": before}, ["y"])
    expected = before.copy()
    expected[addr] = -values
    np.testing.assert_array_equal(out["y"], expected)
