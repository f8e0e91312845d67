"""Reports of exported models speak in the exporter's source (issue 39): each node's
operations are named in the module scopes torch recorded (``pkg.torch.onnx.name_scopes``)
and attributed to the user's Python line (``pkg.torch.onnx.stack_trace``, or the
TorchScript exporter's ``doc_string``); the report is named after the file when the graph
has torch's generic name. Read back with profiler_core's readers. The metadata keys are
plain strings, written here with onnx.helper as torch writes them."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, save_model

from ipu_engine.onnx import InferenceSession
from ipu_engine.onnx.node_origin import node_origin
from profiler_core import pva
from profiler_core.analysis.operations import operations_table
from profiler_core.report.open import open_report
from tests.ipu_engine.onnx_helpers import SMALL, make_model

USER_FILE = "/home/ada/project/net.py"
TORCH = "/usr/lib/python3/site-packages/torch"


def _traceback(user_line: int) -> str:
    """A dynamo stack trace: outermost frame first, the innermost ones torch's own."""
    return (
        f'File "{USER_FILE}", line 40, in forward\n    x = self.encoder(x)\n'
        f'  File "{TORCH}/nn/modules/module.py", line 1775, in _call_impl\n'
        "    return forward_call(*args, **kwargs)\n"
        f'  File "{USER_FILE}", line {user_line}, in forward\n    return self.conv(x)\n'
        f'  File "{TORCH}/nn/modules/conv.py", line 548, in forward\n'
        "    return self._conv_forward(input, self.weight, self.bias)\n"
    )


def _with_metadata(node, scopes, classes, trace):
    for key, value in (
        ("pkg.torch.onnx.name_scopes", repr(scopes)),
        ("pkg.torch.onnx.class_hierarchy", repr(classes)),
        ("pkg.torch.onnx.stack_trace", trace),
    ):
        node.metadata_props.add(key=key, value=value)
    return node


def _exported_model():
    x = np.ones((1, 3, 6, 6), np.float32)
    rng = np.random.default_rng(5)
    conv = _with_metadata(
        helper.make_node("Conv", ["x", "w"], ["c"], name="node_conv2d", pads=[1, 1, 1, 1]),
        ["", "encoder", "encoder.conv", "conv2d"],
        ["Net", "Encoder", "torch.nn.modules.conv.Conv2d", "aten.conv2d.default"],
        _traceback(17),
    )
    relu = _with_metadata(
        helper.make_node("Relu", ["c"], ["r"], name="node_relu"),
        ["", "encoder", "encoder.act", "relu"],
        ["Net", "Encoder", "torch.nn.modules.activation.ReLU", "aten.relu.default"],
        _traceback(18),
    )
    # the TorchScript exporter's doc_string: innermost frame first
    neg = helper.make_node(
        "Neg", ["r"], ["n"], name="Neg_3",
        doc_string=f"{TORCH}/nn/functional.py(2001): neg\n{USER_FILE}(52): forward\n"
        f"{TORCH}/nn/modules/module.py(1501): _slow_forward\n",
    )  # fmt: skip
    plain = helper.make_node("Sigmoid", ["n"], ["y"], name="gate")
    weights = {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32)}
    return make_model([conv, relu, neg, plain], {"x": x}, ["y"], weights, name="main_graph"), x


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exported")
    model, x = _exported_model()
    path = folder / "tiny_net.onnx"
    save_model(model, str(path))
    engine = {"autoReport.all": "true", "autoReport.directory": str(folder / "reports")}
    InferenceSession(path, options={**SMALL, "engine_options": engine}).run(None, {"x": x})
    return folder / "reports" / "tiny_net", path


def test_the_report_is_named_after_the_file_not_main_graph(report):
    directory, _ = report
    assert (directory / "profile.pop").is_file()


def test_operations_are_named_in_the_modules_the_nodes_came_from(report):
    directory, _ = report
    table = operations_table(open_report(directory), "framework")
    assert {
        "ONNX/encoder/conv/Conv_conv2d", "ONNX/encoder/act/Relu_relu", "ONNX/Neg_3",
        "ONNX/Sigmoid_gate",
    } <= set(table.labels)  # fmt: skip
    conv = table.row("ONNX/encoder/conv/Conv_conv2d")
    assert table.total_cycles[conv] > 0
    by_layer = operations_table(open_report(directory), "layer")
    assert "ONNX" in by_layer.labels  # the layer is still the framework's


def _locations(directory, prefix):
    """(file, line) of every library op call whose name starts with ``prefix``."""
    pva_report = pva.openReport(str(directory / "profile.pop"))
    found = set()
    for op in pva.OperationAnalysis(pva_report).operations:
        context = op.debugContext
        if context.name.startswith(prefix):
            found.add((context.location.fileName, context.location.lineNumber))
    return found


def test_operations_point_at_the_users_python_line(report):
    directory, path = report
    assert _locations(directory, "ONNX/encoder/conv/") == {(USER_FILE, 17)}
    assert _locations(directory, "ONNX/encoder/act/") == {(USER_FILE, 18)}
    assert _locations(directory, "ONNX/Neg_3/") == {(USER_FILE, 52)}  # from doc_string
    assert _locations(directory, "ONNX/Sigmoid_gate/") == {(str(path), 4)}  # the 4th node


def test_the_framework_op_records_the_module_and_its_class(report):
    directory, _ = report
    pva_report = pva.openReport(str(directory / "profile.pop"))
    records = [
        op.debugContext.parents[0].json
        for op in pva.OperationAnalysis(pva_report).operations
        if op.debugContext.name.startswith("ONNX/encoder/conv/")
    ]
    assert records and all('"module": "encoder.conv"' in r for r in records)
    assert all('"module_class": "torch.nn.modules.conv.Conv2d"' in r for r in records)
    assert all(f'"source": "{USER_FILE}:17"' in r for r in records)


@pytest.mark.parametrize(
    "scopes", ["not a list", "['a', 3]", "__import__('os').getcwd()", "[" * 500, ""]
)
def test_malformed_metadata_is_ignored(scopes):
    node = helper.make_node("Relu", ["x"], ["y"], name="r", doc_string="no frames here")
    node.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=scopes)
    node.metadata_props.add(key="pkg.torch.onnx.stack_trace", value='File "x.py", line many')
    origin = node_origin(node)
    assert origin.modules == () and origin.location is None


def test_a_stack_of_torch_frames_only_points_at_the_innermost():
    node = helper.make_node("Relu", ["x"], ["y"])
    trace = f'File "{TORCH}/a.py", line 3, in f\n  File "{TORCH}/b.py", line 9, in g\n'
    node.metadata_props.add(key="pkg.torch.onnx.stack_trace", value=trace)
    assert node_origin(node).location == (f"{TORCH}/b.py", 9)


def test_module_paths_that_do_not_nest_keep_their_whole_name():
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    scopes = ["", "blocks.2", "blocks.2.mlp", "blocks.2.mlp.fc1", "linear_8"]
    node.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=repr(scopes))
    assert node_origin(node).modules == ("blocks.2", "mlp", "fc1")
