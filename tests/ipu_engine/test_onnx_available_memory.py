"""availableMemoryProportion the ONNX route, as PopART sets it: a node's
``__available_memory_proportion`` attribute plans its matmul or convolution within that share
of a tile, and the session's ``available_memory_proportion`` option does so for the whole
model; the plans change as the engine-level option changes them (tests/ipu_engine/
test_available_memory.py), here read from the ops' recorded debug arguments."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ipu_engine.common.errors import OnnxError
from ipu_engine.onnx import InferenceSession

TILE_BYTES = 638_976


def matmul_model(proportion: float | None = None) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((1024, 1024)).astype(np.float32)
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="big")
    if proportion is not None:
        node.attribute.append(helper.make_attribute("__available_memory_proportion", proportion))
    graph = helper.make_graph(
        [node], "amp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024, 1024])],
        [onnx.numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def conv_model(proportion: float | None) -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((256, 256, 3, 3)).astype(np.float32) * 0.05
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    if proportion is not None:
        node.attribute.append(helper.make_attribute("__available_memory_proportion", proportion))
    graph = helper.make_graph(
        [node], "amp_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256, 28, 28])],
        [onnx.numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def planned(session: InferenceSession, api: str) -> list[dict]:
    """The debug arguments of every ``api`` op the session's program built."""
    return [c.args for c in session.last.graph.debug.items if c.api == api]


def run(session: InferenceSession, shape: tuple[int, ...]) -> np.ndarray:
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    (y,) = session.run(None, {"x": x})
    return x, y


def test_a_matmul_nodes_attribute_plans_it_within_that_share_of_a_tile():
    default = InferenceSession(matmul_model())
    lowered = InferenceSession(matmul_model(0.1))
    x, y = run(default, (1024, 1024))
    _, y_low = run(lowered, (1024, 1024))
    (before,) = planned(default, "poplin::matMul")
    (after,) = planned(lowered, "poplin::matMul")
    assert before["availableMemoryProportion"] == 0.6
    assert after["availableMemoryProportion"] == pytest.approx(0.1)  # a float32 attribute
    assert after["tempBytesPerTile"] <= 0.1 * TILE_BYTES < before["tempBytesPerTile"]
    assert after["serialSplit"] > before["serialSplit"] == 1
    np.testing.assert_allclose(y_low, y, rtol=1e-5, atol=1e-3)


def test_the_sessions_option_plans_the_whole_model():
    session = InferenceSession(matmul_model(), options={"available_memory_proportion": 0.1})
    run(session, (1024, 1024))
    (args,) = planned(session, "poplin::matMul")
    assert args["availableMemoryProportion"] == 0.1 and args["serialSplit"] > 1


def test_a_convolution_nodes_attribute_serialises_its_plan():
    small = {"tiles_per_ipu": 16}
    default = InferenceSession(conv_model(None), options=small)
    lowered = InferenceSession(conv_model(0.05), options=small)
    _, y = run(default, (1, 256, 28, 28))
    _, y_low = run(lowered, (1, 256, 28, 28))
    (before,) = planned(default, "poplin::convolution")
    (after,) = planned(lowered, "poplin::convolution")
    assert after["availableMemoryProportion"] == pytest.approx(0.05)
    assert after["serialSplit"] > before["serialSplit"]
    assert after["tempBytesPerTile"] < before["tempBytesPerTile"]
    np.testing.assert_allclose(y_low, y, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("bad", [0.0, 1.5, -0.2])
def test_a_proportion_outside_zero_to_one_names_the_node_and_the_attribute(bad):
    with pytest.raises(OnnxError, match=r"big.*__available_memory_proportion.*\(0, 1\]"):
        run(InferenceSession(matmul_model(bad)), (1024, 1024))
