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
