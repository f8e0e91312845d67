"""Codelets reading and writing groups of alike vertices straight from their edges' runs
(``codelets/alike_edges.py``): each distinct input edge read once, outputs written into
memory, and the gathered ``batch[name]`` path when edges are not uniform runs."""

from __future__ import annotations

import numpy as np

from ipu_engine import FLOAT, Graph, IPUModel, Sequence, poputil
from ipu_engine.codelets.alike_edges import group_runs, read_group, write_group, writes_in_place
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.vertex import Input, Output, Vertex, VertexBatch
from ipu_engine.poplar.vertices import EdgeColumn
from tests.ipu_engine.conftest import run_program

SEEN: list[dict] = []


class TwiceAlike(Vertex):
    """out = 2 * in, vertex by vertex of one size (every vertex here has 4 elements)."""

    in_ = Input(FLOAT)
    out = Output(FLOAT)

    @classmethod
    def compute_batch(cls, batch: VertexBatch) -> None:
        sel = np.arange(batch.count)
        found = {f: group_runs(batch, f, sel, 4) for f in ("in", "out")}
        in_place = writes_in_place(batch, "out", [(sel, 4)])
        write_group(batch, "out", sel, 2 * read_group(batch, "in", sel, 4), in_place)
        SEEN.append({"found": found, "in_place": in_place})


def _runs_column(starts: list[list[int]], length: int) -> EdgeColumn:
    """One edge per vertex: its runs (each ``length`` long) at ``starts``."""
    k = len(starts[0])
    flat = np.array(starts, dtype=np.int64).reshape(-1)
    offsets = np.arange(len(starts) + 1, dtype=np.int64) * k * length
    return EdgeColumn(
        None,
        offsets,
        runs=Runs(flat, np.full(flat.size, length, dtype=np.int64)),
        run_offsets=np.arange(len(starts) + 1, dtype=np.int64) * k,
    )


def _run(in_edges: EdgeColumn, out_edges: EdgeColumn) -> tuple[np.ndarray, np.ndarray]:
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [16], "x")
    y = graph.add_variable(FLOAT, [12], "y")
    for t in (x, y):
        poputil.map_tensor_linearly(graph, t)
    graph.create_host_write("x", x)
    graph.create_host_write("y0", y)
    graph.create_host_read("y", y)
    cs = graph.add_compute_set("twice")
    x0, y0 = x.pool_range()[0], y.pool_range()[0]
    shift = {"in": x0, "out": y0}
    for name, col in (("in", in_edges), ("out", out_edges)):
        if col.runs is not None:
            col.runs.start[:] += shift[name]
        else:
            col._addr[:] += shift[name]
    graph.add_vertex_block(cs, TwiceAlike, np.array([0, 1, 2]), {"in": in_edges, "out": out_edges})
    prog = Sequence(Execute(cs))
    values = np.arange(16, dtype=np.float32) + 1
    _, out = run_program(graph, device, prog, {"x": values, "y0": np.zeros(12, np.float32)}, ["y"])
    return values, out["y"]


def test_vertices_reading_the_same_runs_read_them_once() -> None:
    """Vertices 0 and 2 read x[8:10] and x[0:2]; vertex 1 reads x[4:6] and x[12:14]."""
    SEEN.clear()
    in_edges = _runs_column([[8, 0], [4, 12], [8, 0]], 2)
    out_edges = _runs_column([[0], [4], [8]], 4)
    x, y = _run(in_edges, out_edges)
    expected = 2 * np.concatenate([x[[8, 9, 0, 1]], x[[4, 5, 12, 13]], x[[8, 9, 0, 1]]])
    np.testing.assert_array_equal(y, expected)
    found = SEEN[-1]["found"]
    assert found["in"].starts.tolist() == [[4, 12], [8, 0]]  # the distinct edges
    assert found["in"].inverse.tolist() == [1, 0, 1]
    assert found["out"].inverse is None and SEEN[-1]["in_place"]


def test_edges_kept_as_addresses_are_gathered_from_the_batch() -> None:
    """Irregular edges (addresses, not runs) and runs of unequal lengths: the values come
    from ``batch[name]`` and go back through it, with the same results."""
    SEEN.clear()
    in_edges = EdgeColumn(np.array([3, 1, 4, 1, 5, 9, 2, 6, 15, 3, 5, 8]), np.arange(4) * 4)
    out_edges = EdgeColumn(
        None,
        np.arange(4) * 4,
        runs=Runs(np.array([0, 4, 7, 8]), np.array([4, 3, 1, 4])),
        run_offsets=np.array([0, 1, 3, 4]),
    )
    x, y = _run(in_edges, out_edges)
    np.testing.assert_array_equal(y, 2 * x[[3, 1, 4, 1, 5, 9, 2, 6, 15, 3, 5, 8]])
    assert SEEN[-1]["found"] == {"in": None, "out": None} and not SEEN[-1]["in_place"]
