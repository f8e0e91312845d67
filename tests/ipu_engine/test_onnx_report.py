"""The bundled ONNX example's report speaks in the model's terms: the compute belongs to the
"ONNX" layer, Operations by name shows each ONNX node, and no "(none)" row holds more than
5% of the cycles."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.operations import operations_table
from profiler_core.report.open import open_report
from tests.conftest import run_example_with_reports


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    directory = tmp_path_factory.mktemp("onnx_reports")
    run_example_with_reports("onnx_cnn.py", directory)
    return open_report(directory / "onnx_cnn")


def test_no_operation_without_an_op_holds_more_than_5_percent_of_the_cycles(report):
    table = operations_table(report, "op")
    total = table.total_cycles.sum()
    none = table.total_cycles[table.row("")] if "" in table.labels else 0
    assert total > 0 and none <= 0.05 * total, f"(none) holds {none / total:.1%}"
    assert table.total_cycles[table.row("poplin::convolution")] > 0


def test_the_onnx_layer_holds_the_models_compute(report):
    table = operations_table(report, "layer")
    onnx_cycles = table.compute_cycles[table.row("ONNX")]
    assert onnx_cycles > 0.9 * table.compute_cycles.sum()


def test_operations_by_name_show_each_onnx_node(report):
    table = operations_table(report, "name")
    nodes = {label.split("/")[1] for label in table.labels if label.startswith("ONNX/")}
    expected = {"Conv_conv1", "Relu_relu1", "Conv_conv2", "BatchNormalization_bn", "Relu_relu2",
                "MaxPool_pool", "Conv_conv3", "Relu_relu3", "GlobalAveragePool_gap", "Gemm_fc",
                "Softmax_softmax"}  # fmt: skip
    assert expected <= nodes
    conv1 = [i for i, label in enumerate(table.labels) if label.startswith("ONNX/Conv_conv1/")]
    assert np.sum(table.total_cycles[conv1]) > 0


EXAMPLE_NODES = {"Conv_conv1": "Conv", "Relu_relu1": "Relu", "Conv_conv2": "Conv",
                 "BatchNormalization_bn": "BatchNormalization", "Relu_relu2": "Relu",
                 "MaxPool_pool": "MaxPool", "Conv_conv3": "Conv", "Relu_relu3": "Relu",
                 "GlobalAveragePool_gap": "GlobalAveragePool", "Gemm_fc": "Gemm",
                 "Softmax_softmax": "Softmax"}  # fmt: skip


def test_operations_by_framework_op_show_one_row_per_onnx_node(report):
    """A node that lowers to several library calls (BatchNormalization: a multiply and an
    add) is one framework op, holding the cycles of all its calls."""
    by_node = operations_table(report, "framework")
    by_call = operations_table(report, "name")
    assert {f"ONNX/{node}" for node in EXAMPLE_NODES} <= set(by_node.labels)
    bn_calls = [i for i, label in enumerate(by_call.labels) if "/BatchNormalization_bn/" in label]
    assert len(bn_calls) >= 2  # the node is more than one call
    bn = by_node.row("ONNX/BatchNormalization_bn")
    assert by_node.total_cycles[bn] == by_call.total_cycles[bn_calls].sum() > 0
    onnx_rows = [i for i, label in enumerate(by_node.labels) if label.startswith("ONNX/")]
    assert (
        by_node.compute_cycles[onnx_rows].sum()
        == operations_table(report, "layer").compute_cycles[
            operations_table(report, "layer").row("ONNX")
        ]
    )


def test_operations_by_framework_op_type_add_up_the_nodes_of_each_type(report):
    by_type = operations_table(report, "framework_op")
    by_node = operations_table(report, "framework")
    for op_type in set(EXAMPLE_NODES.values()):
        nodes = [n for n, t in EXAMPLE_NODES.items() if t == op_type]
        expected = sum(int(by_node.total_cycles[by_node.row(f"ONNX/{n}")]) for n in nodes)
        assert by_type.total_cycles[by_type.row(f"onnx::{op_type}")] == expected > 0
