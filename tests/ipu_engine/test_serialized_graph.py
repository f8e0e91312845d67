"""The serialized graph (autoReport.outputSerializedGraph, issue 41): what each kind of
program writes, and that building it again unchanged gives back the report's own figures --
a Poplar program's calls, the ONNX example's and the four-shard front-end example's traced
IR -- so a changed build predicts what the program would do. A program that makes its own
vertices is recorded as one that cannot be replayed, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from ipu_engine import FLOAT, Engine, Execute, Graph, Input, IPUModel, Output, Vertex
from ipu_engine.replan import ReplanError, predict
from profiler_core.analysis.liveness import liveness_table
from profiler_core.formats.serialized_graph import GRAPH_FILE, read_serialized_graph
from profiler_core.insights import insights
from profiler_core.insights.whatif import what_if
from profiler_core.report import open_report
from tests.conftest import run_example_with_reports


def _replayed_as_reported(folder: Path) -> dict:
    """The record built again unchanged, compiled, beside the report's own figures."""
    report = open_report(folder)
    graph = read_serialized_graph(folder, report.header.report_id)
    runs = report.execution.runs
    figures = predict(graph.record, graph.arrays, None, [r.program for r in runs])
    fit = insights(report).fit
    assert figures.fullest_bytes == fit.fullest_bytes
    assert figures.tiles_over == len(fit.tiles_over)
    assert figures.peak_live_bytes == liveness_table(report).peak_bytes
    assert figures.total_cycles == sum(r.total_cycles for r in runs)
    return graph.record


def test_tutorial4_records_its_calls_and_builds_back_to_its_report(tutorial4_report):
    record = _replayed_as_reported(tutorial4_report)
    assert record["kind"] == "poplar" and record["problems"] == []
    apis = [c["api"] for c in record["calls"]]
    assert apis.count("Graph.add_variable") == 3 and apis.count("poplin.mat_mul") == 2
    m4 = next(c for c in record["calls"] if c["api"] == "poplin.mat_mul")
    assert m4["args"]["debug_prefix"] == "m4"
    assert m4["args"]["a"] == {"$ref": [apis.index("Graph.add_variable"), -1]}
    assert record["target"]["tiles_per_ipu"] == 1472
    # a library op's own variables and vertices are not recorded: the op makes them again
    assert "Graph.add_compute_set" not in apis and "Graph.add_vertex_block" not in apis


@pytest.fixture(scope="module")
def onnx_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("onnx")
    run_example_with_reports("onnx_cnn.py", directory)
    return directory / "onnx_cnn"


def test_an_onnx_model_records_its_traced_ir_and_builds_back_to_its_report(onnx_report):
    record = _replayed_as_reported(onnx_report)
    assert record["kind"] == "framework" and record["program"] == "onnx"
    nodes = record["trace"]["nodes"]
    ops = {row[1] for row in nodes}
    assert "conv" in ops and "param" in ops
    conv = next(row for row in nodes if row[1] == "conv")
    framework = [scope for scope in conv[8] if isinstance(scope, list)]  # [name, op]
    assert framework and framework[0][1] == "onnx::Conv"
    weight = next(row for row in nodes if row[1] == "param")
    assert set(weight[5]["value"]) == {"$zeros"}  # a weight travels as its shape only


def test_a_sharded_front_end_program_builds_back_to_its_report(four_shards_report):
    record = _replayed_as_reported(four_shards_report)
    shards = {row[6] for row in record["trace"]["nodes"] if row[1] not in ("input", "param")}
    assert shards == {0, 1, 2, 3}


class Scale(Vertex):
    x = Input(FLOAT)
    y = Output(FLOAT)

    def compute(self):
        self.y[:] = 2 * self.x


def test_a_program_making_its_own_vertices_is_recorded_as_not_replayable(tmp_path):
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    x, y = graph.add_variable(FLOAT, [4], "x"), graph.add_variable(FLOAT, [4], "y")
    graph.set_tile_mapping(x, 0)
    graph.set_tile_mapping(y, 0)
    cs = graph.add_compute_set("scale")
    vertex = graph.add_vertex(cs, Scale, x=x, y=y)
    graph.set_tile_mapping(vertex, 0)
    options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    Engine(graph, Execute(cs, name="user_vertices"), options=options)
    folder = tmp_path / "user_vertices"
    record = read_serialized_graph(folder / GRAPH_FILE).record
    assert record["problems"] and "Graph.add_vertex" in " ".join(record["problems"])
    with pytest.raises(ReplanError, match="cannot be replayed: Graph.add_"):
        predict(record, {}, None, [])
    found = what_if(open_report(folder))
    assert not found.available and "Python code" in found.reason
    assert insights(open_report(folder)).fit.fits  # the report itself is as ever
