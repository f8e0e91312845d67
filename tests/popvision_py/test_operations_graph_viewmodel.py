"""The Operations graph's view models without a window: folding a layer, the link with the
one selection both ways, and the page's words for a report it cannot draw."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from popvision_py.viewmodels.graph_picture import bands
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.operations_graph import OperationsGraphModel
from popvision_py.viewmodels.operations_graph_open import (
    NO_GRAPH,
    POPLAR_RECORD,
    open_operations_graph,
)
from popvision_py.viewmodels.selection import ReportSelection
from profiler_core.analysis.operation_index import operation_index
from profiler_core.analysis.operations import operations_table
from profiler_core.formats.serialized_graph import GRAPH_FILE
from profiler_core.report import open_report


def model_of(folder: Path) -> OperationsGraphModel:
    model = open_operations_graph(OpenedReport(open_report(folder)))
    assert isinstance(model, OperationsGraphModel), model
    model.selection = ReportSelection()
    return model


@pytest.fixture(scope="module")
def pipelined_model(pipelined_folder) -> OperationsGraphModel:
    return model_of(pipelined_folder)


def test_folding_a_layer_shows_it_as_one_node_with_its_edges_rerouted(pipelined_folder):
    model = model_of(pipelined_folder)
    graph = model.graph
    assert len(model.shown) == len(graph)  # a front-end model opens with every op shown
    linear2 = graph.scopes.path.index("linear2")
    grad = graph.scopes.path.index("linear2/grad")
    forward = set(np.flatnonzero(graph.scope == linear2).tolist())
    backward = set(np.flatnonzero(graph.scope == grad).tolist())
    assert len(forward) == 4 and len(backward) == 5  # weight, bias, matmul, add; its gradient
    model.set_collapsed(linear2, True)
    # the layer is one node, its backward pass another: 9 ops drawn as 2
    assert len(model.shown) == len(graph) - 9 + 2
    layer = int(np.flatnonzero(model.shown.scope == linear2)[0])
    back = int(np.flatnonzero(model.shown.scope == grad)[0])
    assert model.title(layer) == "▸ linear2 (4 ops)"
    assert model.title(back) == "▸ linear2/grad (5 ops)"
    # every edge into or out of a folded group now meets its node; none is inside one
    for members, node in ((forward, layer), (backward, back)):
        outside = {
            (int(model.shown.shown_of_node[s]), int(model.shown.shown_of_node[d]))
            for s, d in zip(graph.edge_src, graph.edge_dst, strict=True)
            if (s in members) != (d in members)
        }
        shown = set(zip(model.shown.edge_src.tolist(), model.shown.edge_dst.tolist(), strict=True))
        assert outside and outside <= shown and all(node in pair for pair in outside)
        assert not any(s == d for s, d in shown)
        # its figures are its members'
        assert model.values("Cycles")[node] == model.figures.cycles[sorted(members)].sum()
    # the forward pass stays in order: linear2 above relu3, its gradient below both
    relu3 = int(model.shown.shown_of_node[graph.key.index("relu3/relu")])
    assert model.layout.layer[layer] < model.layout.layer[relu3] < model.layout.layer[back]
    # a double-click on either opens the layer
    assert model.fold_toggle(back) == (linear2, False) == model.fold_toggle(layer)
    model.set_collapsed(linear2, False)
    assert len(model.shown) == len(graph)


def test_an_onnx_model_opens_as_its_onnx_graph(resnet_onnx_folder):
    model = model_of(resnet_onnx_folder)
    onnx_nodes = [s for s, op in enumerate(model.graph.scopes.op) if op.startswith("onnx::")]
    # one node per ONNX node, and the model's input
    assert sorted(model.shown.scope[model.shown.scope >= 0].tolist()) == onnx_nodes
    assert len(model.shown) == len(onnx_nodes) + 1
    assert "have no figures" in model.legend_text()
    report = open_report(resnet_onnx_folder)
    table = operations_table(report, "layer")
    total = int(table.total_cycles.sum())
    host = int(table.total_cycles[table.labels.index("host")])
    legend = model.legend_text()  # the nodes and the rest add up to the run, as Operations
    assert f"The nodes hold {total - host:,} of the run's {total:,} cycles" in legend
    assert legend.endswith(f"(Operations by layer): host {host:,}.")


def test_clicking_a_node_selects_its_operation_and_steps(pipelined_folder, pipelined_model):
    model = pipelined_model
    node = model.graph.key.index("linear4/matmul")
    shown = int(model.shown.shown_of_node[node])
    model.click(shown)
    index = operation_index(open_report(pipelined_folder), "name")
    expected = index.steps(index.group("linear4/matmul"))
    assert model.selection.operation == "linear4/matmul"
    assert model.selection.operation_group_by == "name"
    assert model.selection.operation_steps.tolist() == expected.tolist()
    assert np.flatnonzero(model.marked()).tolist() == [shown]
    model.click(-1)
    assert model.selection.operation == "" and not model.marked().any()


def test_an_operation_selected_elsewhere_marks_its_nodes(pipelined_folder, pipelined_model):
    model = pipelined_model
    index = operation_index(open_report(pipelined_folder), "op")
    steps = index.steps(index.group("poplin::matMul"))
    model.selection.select_operation("poplin::matMul", steps, "op")
    marked = {
        model.graph.key[int(model.shown.trace_node[k])] for k in np.flatnonzero(model.marked())
    }
    matmuls = {model.graph.key[k] for k, op in enumerate(model.graph.op) if op == "matmul"}
    assert marked == matmuls
    model.selection.select_operation("linear0", [], "layer")  # Operations grouped by layer
    marked = np.flatnonzero(model.marked())
    assert {model.graph.scopes.path[model.scope_of_shown(k)] for k in marked} == {
        "linear0",
        "linear0/grad",
    }


def test_pipeline_stages_are_bands_of_layers(pipelined_model):
    found = bands(pipelined_model)
    assert {b.label for b in found} == {"Stage 0", "Stage 1", "Stage 2", "Stage 3"}
    # the forward pass goes down the stages and the backward pass back up
    first_of = {}
    for band in sorted(found, key=lambda b: b.top):
        first_of.setdefault(band.label, band.top)
    assert sorted(first_of, key=first_of.get) == ["Stage 0", "Stage 1", "Stage 2", "Stage 3"]


def test_a_report_without_a_serialized_graph_says_how_to_get_one(pipelined_folder, tmp_path):
    folder = tmp_path / "pipelined"
    shutil.copytree(pipelined_folder, folder)
    (folder / GRAPH_FILE).unlink()
    text = open_operations_graph(OpenedReport(open_report(folder)))
    assert text == NO_GRAPH
    assert "autoReport.outputSerializedGraph" in text and "autoReport.all" in text


def test_a_poplar_programs_report_says_it_has_no_model_graph(tutorial4_report):
    assert open_operations_graph(OpenedReport(open_report(tutorial4_report))) == POPLAR_RECORD


def test_a_damaged_serialized_graph_is_named_with_what_is_wrong(pipelined_folder, tmp_path):
    folder = tmp_path / "pipelined"
    shutil.copytree(pipelined_folder, folder)
    path = folder / GRAPH_FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    text = open_operations_graph(OpenedReport(open_report(folder)))
    assert isinstance(text, str)
    assert str(path) in text and "checksum" in text
