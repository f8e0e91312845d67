"""The partials-major Reduce codelet (the second stage of matmul, conv and gather) runs
all its vertices in one numpy pass: vertices with different partial counts, -0.0 kept."""

from __future__ import annotations

import numpy as np

from ipu_engine import FLOAT, Graph, IPUModel, Sequence
from ipu_engine.codelets.reduce import reduce_codelet
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.vertices import EdgeColumn
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


def _reduce_of_runs(
    square: bool,
    depths: tuple[int, int],
    scales: tuple[float, float] = (1.0, 1.0),
    out_starts: tuple[int, ...] = (0, 5, 3, 6),
) -> tuple[list[float], object, object]:
    """Two vertices reducing runs of a [3, 8] partials tensor partial by partial: vertex 0
    outputs 0..2 and 5 (runs 0:3 and 5:6 of each partial), vertex 1 outputs 3, 4, 6, 7,
    written to ``out_starts`` (runs of 3, 1, 2 and 2 elements)."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    partials = graph.add_variable(FLOAT, [3, 8], "partials")
    out = graph.add_variable(FLOAT, [8], "out")
    for t in (partials, out):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("partials", partials)
    graph.create_host_read("out", out)
    base, o = partials.pool_range()[0], out.pool_range()[0]
    # a run's first element and length, partial by partial, vertex by vertex
    v0 = [(d * 8 + s, n) for d in range(depths[0]) for s, n in ((0, 3), (5, 1))]
    v1 = [(d * 8 + s, n) for d in range(depths[1]) for s, n in ((3, 2), (6, 2))]
    start = np.array([base + s for s, _ in v0 + v1], dtype=np.int64)
    length = np.array([n for _, n in v0 + v1], dtype=np.int64)
    in_col = EdgeColumn(
        None,
        np.array([0, 4 * depths[0], 4 * (depths[0] + depths[1])]),
        runs=Runs(start, length),
        run_offsets=np.array([0, len(v0), len(v0) + len(v1)]),
    )
    out_col = EdgeColumn(
        None,
        np.array([0, 4, 8]),
        runs=Runs(o + np.array(out_starts), np.array([3, 1, 2, 2])),
        run_offsets=np.array([0, 2, 4]),
    )
    cs = graph.add_compute_set("Reduce")
    codelet = reduce_codelet("SQUARE_ADD" if square else "ADD", FLOAT, partials_major=True)
    block = graph.add_vertex_block(cs, codelet, np.array([0, 1]), {"in": in_col, "out": out_col})
    block.state["numPartials"][:] = depths
    block.state["scale"][:] = scales
    values = (np.arange(24, dtype=np.float32) - 7).reshape(3, 8)
    values[:, 1] = -0.0  # output 1 sums negative zeros: -0.0, not 0.0
    engine, got = run_program(graph, device, Sequence(Execute(cs)), {"partials": values}, ["out"])
    (runner,) = engine.executable.plans[cs.id].runners
    found = runner.cache["shifted_partials"]
    assert np.signbit(got["out"][1]) != square  # squares of -0.0 are +0.0
    return got["out"].tolist(), values, found, runner.cache.get("output_span")


def test_partials_that_are_shifted_runs_are_read_partial_by_partial() -> None:
    got, values, found, _ = _reduce_of_runs(False, (3, 3))
    assert got == values.sum(axis=0).tolist()
    assert found is not None and found.shift == 8 and found.depth == 3
    assert found.span == (found.start.min(), found.start.min() + 8)  # each partial one slice
    got, values, _, _ = _reduce_of_runs(True, (3, 3))
    assert got == (values.astype(np.float64) ** 2).sum(axis=0).tolist()


def test_outputs_that_are_the_partials_span_moved_are_written_as_one_slice() -> None:
    """Outputs 0..7 at the places of their first partials 0..7: the sums over the span
    are the outputs in address order, scaled per vertex (vertex 1's by 0.5)."""
    got, values, _, span = _reduce_of_runs(False, (3, 3), scales=(1.0, 0.5))
    expected = values.sum(axis=0)
    expected[[3, 4, 6, 7]] *= 0.5
    assert got == expected.tolist()
    assert span is not None and span.scale.tolist() == [1, 1, 1, 0.5, 0.5, 1, 0.5, 0.5]


def test_outputs_elsewhere_than_their_partials_are_picked_out_of_the_span() -> None:
    """Vertex 1's outputs 3, 4 and 6, 7 trade places: not the span moved, each output's
    sum picked out of the span's and scattered, with the same values."""
    got, values, _, span = _reduce_of_runs(False, (3, 3), (1.0, 0.5), (0, 5, 6, 3))
    sums = values.sum(axis=0)
    expected = sums.copy()
    expected[[6, 7, 3, 4]] = sums[[3, 4, 6, 7]] * 0.5
    assert span is None and got == expected.tolist()


def test_vertices_with_unequal_partials_take_the_gathered_path() -> None:
    got, values, found, _ = _reduce_of_runs(False, (3, 2))
    expected = values.sum(axis=0)
    expected[[3, 4, 6, 7]] = values[:2, [3, 4, 6, 7]].sum(axis=0)
    assert found is None and got == expected.tolist()


def test_outputs_spread_thinly_over_their_partials_are_gathered_partial_by_partial() -> None:
    """Outputs 0..2 and 15..16 of a [2, 20] partials tensor: their first partials span 17
    elements for 5 outputs, more than twice as many, so each partial is gathered, not
    sliced; the sums are the same."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    partials = graph.add_variable(FLOAT, [2, 20], "partials")
    out = graph.add_variable(FLOAT, [5], "out")
    for t in (partials, out):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("partials", partials)
    graph.create_host_read("out", out)
    base = partials.pool_range()[0]
    starts = np.array([0, 15, 20, 35], dtype=np.int64) + base
    in_col = EdgeColumn(
        None,
        np.array([0, 10]),
        runs=Runs(starts, np.array([3, 2, 3, 2])),
        run_offsets=np.array([0, 4]),
    )
    out_col = EdgeColumn(out.flat_addr(), np.array([0, 5]))
    cs = graph.add_compute_set("Reduce")
    codelet = reduce_codelet("ADD", FLOAT, partials_major=True)
    block = graph.add_vertex_block(cs, codelet, np.array([0]), {"in": in_col, "out": out_col})
    block.state["numPartials"][:] = 2
    values = (np.arange(40, dtype=np.float32) * 1.5 - 11).reshape(2, 20)
    engine, got = run_program(graph, device, Sequence(Execute(cs)), {"partials": values}, ["out"])
    (runner,) = engine.executable.plans[cs.id].runners
    found = runner.cache["shifted_partials"]
    assert found is not None and found.shift == 20 and found.span is None
    cols = [0, 1, 2, 15, 16]
    assert got["out"].tolist() == (values[0, cols] + values[1, cols]).tolist()


def test_outputs_written_over_a_partial_still_to_be_read_get_every_partials_sum() -> None:
    """A vertex summing rows 0, 1 and 2 of a [3, 8] partials tensor into row 1 itself: the
    outputs are the span moved, but summing in them would overwrite row 1 before it is
    read, so the sums are made first, then written (row 0 + row 1 + row 2, by hand)."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    partials = graph.add_variable(FLOAT, [3, 8], "partials")
    graph.set_tile_mapping(partials, 0)
    graph.create_host_write("partials", partials)
    graph.create_host_read("partials_out", partials)
    base = partials.pool_range()[0]
    in_col = EdgeColumn(
        None,
        np.array([0, 24]),
        runs=Runs(base + np.array([0, 8, 16], dtype=np.int64), np.array([8, 8, 8])),
        run_offsets=np.array([0, 3]),
    )
    out_col = EdgeColumn(
        None, np.array([0, 8]), runs=Runs(np.array([base + 8]), np.array([8])),
        run_offsets=np.array([0, 1]),
    )  # fmt: skip
    cs = graph.add_compute_set("Reduce")
    codelet = reduce_codelet("ADD", FLOAT, partials_major=True)
    block = graph.add_vertex_block(cs, codelet, np.array([0]), {"in": in_col, "out": out_col})
    block.state["numPartials"][:] = [3]
    values = np.arange(24, dtype=np.float32).reshape(3, 8)
    engine, got = run_program(
        graph, device, Sequence(Execute(cs)), {"partials": values}, ["partials_out"]
    )
    (runner,) = engine.executable.plans[cs.id].runners
    assert runner.cache.get("output_span") is not None  # the outputs are the span moved
    assert got["partials_out"][1].tolist() == [24.0 + 3 * i for i in range(8)]
    assert got["partials_out"][[0, 2]].tolist() == values[[0, 2]].tolist()
