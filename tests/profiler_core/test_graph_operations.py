"""The framework graph's nodes joined to the report's operations, on real reports: the
pipelined example (front-end, 4 stages, training) and two ResNet blocks read from ONNX.
Expected figures come from the Operations tables grouped another way (by operation name,
by layer, by framework op), never from the join itself."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.framework_graph import framework_graph, read_framework_graph
from profiler_core.analysis.graph_operations import node_figures
from profiler_core.analysis.operation_index import operation_index
from profiler_core.analysis.operations import operations_table
from profiler_core.errors import ReportError
from profiler_core.formats.serialized_graph import (
    SerializedGraph,
    read_serialized_graph,
    write_serialized_graph,
)
from profiler_core.report import open_report


def rows(report, group_by: str) -> dict[str, tuple[int, int]]:
    table = operations_table(report, group_by)
    pairs = zip(table.total_cycles.tolist(), table.variable_bytes.tolist(), strict=True)
    return dict(zip(table.labels, pairs, strict=True))


def under(table: dict[str, tuple[int, int]], key: str) -> tuple[int, int]:
    """The cycles and bytes of the rows named ``key`` or ``key/...`` (its nested calls)."""
    hits = [v for label, v in table.items() if label == key or label.startswith(key + "/")]
    return sum(c for c, _ in hits), sum(b for _, b in hits)


@pytest.fixture(scope="module")
def pipelined(pipelined_folder):
    report = open_report(pipelined_folder)
    graph = read_framework_graph(pipelined_folder)
    return report, graph, node_figures(report, graph)


@pytest.fixture(scope="module")
def resnet(resnet_onnx_folder):
    report = open_report(resnet_onnx_folder)
    graph = read_framework_graph(resnet_onnx_folder)
    return report, graph, node_figures(report, graph)


def test_a_node_named_as_its_operation_has_that_operations_cycles_and_bytes(pipelined):
    report, graph, figures = pipelined
    by_name = rows(report, "name")
    keys = [graph.key[k] for k in np.flatnonzero(graph.computes)]
    checked = 0
    for key in sorted(set(keys)):
        nodes = [k for k in np.flatnonzero(graph.computes) if graph.key[k] == key]
        cycles, memory = under(by_name, key)
        if not cycles:
            continue  # a library op that names its call itself: checked by layer below
        # two nodes of one key (two matmuls in linear6/grad) share its rows between them
        assert int(figures.cycles[nodes].sum()) == cycles, key
        assert int(figures.memory[nodes].sum()) == memory, key
        assert (figures.cycles[nodes] > 0).all(), key
        checked += 1
    assert checked >= 20


def test_every_layers_nodes_add_up_to_its_operations_row(pipelined):
    """By layer (the outermost name scope), independently of names: the nodes in a layer
    hold exactly its row's cycles -- so the crossEntropy call of softmax_xent is found."""
    report, graph, figures = pipelined
    by_layer = rows(report, "layer")
    tops = {graph.scopes.path[s] for s in range(len(graph.scopes)) if graph.scopes.parent[s] < 0}
    scope_top = [graph.scopes.path[graph.scopes.ancestors(s)[-1]] for s in range(len(graph.scopes))]
    for top in sorted(tops):
        inside = [
            k for k in range(len(graph)) if graph.scope[k] >= 0 and scope_top[graph.scope[k]] == top
        ]
        assert int(figures.cycles[inside].sum()) == by_layer[top][0], top
    softmax = graph.op.index("softmax_xent")
    assert figures.cycles[softmax] > 0 and figures.label[softmax] == "crossentropyloss/crossEntropy"


def test_the_nodes_and_what_ran_outside_the_graph_add_up_to_the_run(pipelined, resnet):
    """What the page's legend says: the nodes' cycles and the layers no node ran (host
    transfers, the pipeline's phases, the optimizer) add up to every operation's cycles."""
    for report, graph, figures in (pipelined, resnet):
        by_layer = rows(report, "layer")
        on_graph = int(figures.cycles.sum() + figures.scope_cycles.sum())
        assert on_graph + sum(figures.off_graph.values()) == sum(c for c, _ in by_layer.values())
        tops = {
            graph.scopes.path[s] for s in range(len(graph.scopes)) if graph.scopes.parent[s] < 0
        }
        for layer, cycles in figures.off_graph.items():
            assert layer not in tops and cycles == by_layer[layer][0], layer
        assert "host" in figures.off_graph  # the feeds are operations with no traced node
    assert {"pipeline", "optimizer", "gradientAccumulation"} <= set(pipelined[2].off_graph)


def test_every_compute_node_with_an_operation_has_cycles(pipelined, resnet):
    for _, graph, figures in (pipelined, resnet):
        computes = graph.computes
        assert (figures.cycles[computes & figures.has_figures] > 0).all()
        # the loss's gradient is made by the loss op itself: its one compute node without
        missing = [graph.op[k] for k in np.flatnonzero(computes & ~figures.has_figures)]
        assert missing in ([], ["softmax_xent_grad"])


def test_an_onnx_nodes_ops_add_up_to_its_framework_op_row(resnet):
    report, graph, figures = resnet
    by_framework = rows(report, "framework")
    scopes = graph.scopes
    onnx_nodes = [s for s in range(len(scopes)) if scopes.op[s].startswith("onnx::")]
    assert len(onnx_nodes) == 14  # 2 blocks x (2 conv, 2 batch norm, relu, add, relu)
    for s in onnx_nodes:
        inside = np.flatnonzero(graph.scope == s)
        total = int(figures.cycles[inside].sum() + figures.scope_cycles[s])
        assert total == by_framework[scopes.path[s]][0], scopes.path[s]
        assert figures.scope_label[s] == scopes.path[s]


def test_a_nodes_steps_are_its_operations_steps(pipelined):
    report, graph, figures = pipelined
    index = operation_index(report, "name")
    node = graph.key.index("linear2/matmul")
    group = index.group("linear2/matmul")
    assert figures.label[node] == "linear2/matmul"
    assert figures.steps(node).tolist() == index.steps(group).tolist()


def test_a_weights_memory_is_its_variables_bytes(pipelined):
    _, graph, figures = pipelined
    weight = graph.node_name.index("linear2.weight")
    assert graph.shape[weight] == (256, 256)
    assert figures.memory[weight] == 256 * 256 * 4


def test_a_poplar_programs_record_is_refused_saying_what_the_graph_needs(tutorial4_report):
    with pytest.raises(ReportError, match="Poplar program's calls, not a framework graph"):
        framework_graph(read_serialized_graph(tutorial4_report))


def _bundle_with(folder, tmp_path, change) -> SerializedGraph:
    """The report's serialized graph written again with ``change`` made to its record."""
    graph = read_serialized_graph(folder)
    record = change(graph.record)
    path = tmp_path / "serialized_graph.bundle"
    write_serialized_graph(path, graph.report_id, record, graph.arrays)
    return read_serialized_graph(path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda row: row.__setitem__(3, "not a shape"),  # shape
        lambda row: row.__setitem__(3, [None]),  # a dimension that is no number
        lambda row: row.__setitem__(8, 7),  # scopes not a list
        lambda row: row.__setitem__(8, [[]]),  # a framework scope without its name
    ],
)
def test_a_node_of_the_wrong_kind_is_a_report_error_naming_the_file(
    pipelined_folder, tmp_path, damage
):
    def change(record):
        damage(record["trace"]["nodes"][5])
        return record

    hostile = _bundle_with(pipelined_folder, tmp_path, change)
    with pytest.raises(ReportError, match="not as written by the engine") as caught:
        framework_graph(hostile)
    assert str(tmp_path / "serialized_graph.bundle") in str(caught.value)
