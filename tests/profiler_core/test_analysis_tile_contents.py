"""Compute sets, vertices per codelet and exchanges on a tile selection, checked against hand
counts on a small engine graph (one IPU of 8 tiles, vertices placed by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import INT, Copy, Engine, Execute, Graph, InOut, IPUModel, Sequence, Vertex
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.tile_contents import (
    EXCHANGE_MEMORY,
    compute_sets_on_tiles,
    exchanges_on_tiles,
    vertices_on_tiles,
)
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report


class Increment(Vertex):
    counter = InOut(INT, scalar=True)

    def compute(self):
        self.counter = self.counter + 1


class Double(Vertex):
    value = InOut(INT, scalar=True)
    code_bytes = 512

    def compute(self):
        self.value = self.value * 2


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    """incA: Increment on tiles 0, 1, 2; incB: Increment on 2, 3 and Double on 2, 5;
    a copy of x[0] (tile 0) to y (tile 6)."""
    device = IPUModel("ipu2", tiles_per_ipu=8).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(INT, [8], "x")
    for tile in range(8):
        graph.set_tile_mapping(x[tile], tile)
    y = graph.add_variable(INT, [1], "y")
    graph.set_tile_mapping(y, 6)
    inc_a, inc_b = graph.add_compute_set("incA"), graph.add_compute_set("incB")
    for cs, codelet, field, tiles in (
        (inc_a, Increment, "counter", (0, 1, 2)),
        (inc_b, Increment, "counter", (2, 3)),
        (inc_b, Double, "value", (2, 5)),
    ):
        for tile in tiles:
            vertex = graph.add_vertex(cs, codelet, **{field: x[tile]})
            graph.set_tile_mapping(vertex, tile)
    prog = Sequence(Execute(inc_a), Execute(inc_b), Copy(x.slice(0, 1), y))
    directory = tmp_path_factory.mktemp("tile_contents")
    options = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    engine = Engine(graph, prog, options=options)
    engine.load(device)
    engine.run(0)
    report = open_report(engine.report_folder)
    report.load()
    return report, Increment.code_bytes, Double.code_bytes


def test_compute_sets_on_tiles_count_vertices_tiles_and_codelets(small_report):
    report, _, _ = small_report
    found = compute_sets_on_tiles(report, np.array([0, 2]))
    rows = {name: i for i, name in enumerate(found.names)}
    assert set(rows) == {"incA", "incB"}
    a, b = rows["incA"], rows["incB"]
    # incA: tiles 0 and 2 of its 0, 1, 2; incB on tile 2: one Increment and one Double
    assert (found.vertices[a], found.tiles[a], found.codelets[a]) == (2, 2, 1)
    assert (found.vertices[b], found.tiles[b], found.codelets[b]) == (2, 1, 2)
    assert found.steps.tolist() == [1, 1]  # each executed by one program step
    assert (found.cycles > 0).all()
    assert len(compute_sets_on_tiles(report, np.array([4, 7]))) == 0


def test_vertices_on_tiles_count_per_codelet_with_code_once_per_tile(small_report):
    report, increment_code, double_code = small_report
    found = vertices_on_tiles(report, np.array([0, 2, 5]))
    rows = dict(zip(found.names, range(len(found)), strict=True))
    inc = next(i for name, i in rows.items() if "Increment" in name)
    dbl = next(i for name, i in rows.items() if "Double" in name)
    # Increment: tile 0 (incA), tile 2 (incA and incB); Double: tiles 2 and 5 (incB)
    assert (found.vertices[inc], found.tiles[inc], found.compute_sets[inc]) == (3, 2, 2)
    assert (found.vertices[dbl], found.tiles[dbl], found.compute_sets[dbl]) == (2, 2, 1)
    assert found.code_bytes[inc] == 2 * increment_code
    assert found.code_bytes[dbl] == 2 * double_code
    assert found.vertices.tolist() == sorted(found.vertices.tolist(), reverse=True)


def test_exchanges_on_tiles_sum_bytes_in_and_out_per_step(small_report):
    report, _, _ = small_report
    found = exchanges_on_tiles(report, np.array([0, 6]))
    assert len(found) == 1  # the copy from tile 0 to tile 6
    assert (found.bytes_out[0], found.bytes_in[0], found.tiles[0]) == (4, 4, 2)  # one INT
    assert found.kinds == ["DoExchange"]
    only_sender = exchanges_on_tiles(report, np.array([0]))
    assert (only_sender.bytes_out[0], only_sender.bytes_in[0]) == (4, 0)
    assert len(exchanges_on_tiles(report, np.array([3]))) == 0
    table = memory_table(report)
    for category in EXCHANGE_MEMORY:
        expected = int(table.by_category[int(category), [0, 6]].sum())
        assert found.memory[category] == expected


def test_tiles_off_the_target_are_refused(small_report):
    report, _, _ = small_report
    with pytest.raises(IndexError):
        compute_sets_on_tiles(report, np.array([8]))


def test_the_engine_records_edges_and_vertex_state_sizes(small_report):
    report, _, _ = small_report
    # 7 vertices (3 + 2 Increment, 2 Double), each with one scalar edge
    assert report.graph.num_edges == 7
    names = report.graph.strings.take(report.graph.vt_name)
    # one scalar edge is one 4-byte pointer of instance state
    assert dict(zip(names, report.graph.vt_state_bytes.tolist(), strict=True)) == {
        name: 4 for name in names
    }
    found = compute_sets_on_tiles(report, np.array([2]))
    rows = dict(zip(found.names, found.state_bytes.tolist(), strict=True))
    assert rows == {"incA": 4, "incB": 8}  # tile 2: one vertex of incA, two of incB


def test_vertex_state_per_compute_set_adds_up_to_the_memory_category(tutorial4_report):
    """On a real report, the state split by compute set sums to the tiles' vertex state."""
    report = open_report(tutorial4_report)
    tiles = np.arange(0, 1472, 7)
    found = compute_sets_on_tiles(report, tiles)
    state = memory_table(report).by_category[MemoryCategory.VERTEX_STATE, tiles].sum()
    assert int(found.state_bytes.sum()) == int(state) > 0
