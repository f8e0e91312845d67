"""Each lowered ONNX operator equals onnxruntime on a small model built with onnx.helper: the
operator applied to a model input (so it runs on the IPU), with weights where it takes some."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.ipu_engine.onnx_helpers import assert_matches_ort, make_model

rng = np.random.default_rng(27)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def i64(*values):
    return np.array(values, dtype=np.int64)


# (op, attrs, inputs: first one a model input, the rest weights unless named in feeds)
CASES = {
    "add_broadcast": ("Add", {}, {"x": f32(2, 3, 4)}, {"w": f32(4)}),
    "sub_scalar": ("Sub", {}, {"x": f32(3, 4)}, {"w": np.array(0.5, np.float32)}),
    "mul_two_inputs": ("Mul", {}, {"x": f32(3, 4), "y": f32(3, 1)}, {}),
    "div": ("Div", {}, {"x": f32(3, 4)}, {"w": (np.abs(f32(3, 4)) + 1).astype(np.float32)}),
    "pow_square": ("Pow", {}, {"x": f32(5)}, {"w": np.array(2.0, np.float32)}),
    "pow_tensor": ("Pow", {}, {"x": np.abs(f32(6)) + 0.1}, {"w": f32(6)}),
    "sqrt": ("Sqrt", {}, {"x": np.abs(f32(7)) + 0.1}, {}),
    "exp": ("Exp", {}, {"x": f32(7)}, {}),
    "log": ("Log", {}, {"x": np.abs(f32(7)) + 0.1}, {}),
    "tanh": ("Tanh", {}, {"x": f32(7)}, {}),
    "sigmoid": ("Sigmoid", {}, {"x": f32(7)}, {}),
    "relu": ("Relu", {}, {"x": f32(2, 7)}, {}),
    "neg": ("Neg", {}, {"x": f32(7)}, {}),
    "abs": ("Abs", {}, {"x": f32(7)}, {}),
    "reciprocal": ("Reciprocal", {}, {"x": np.abs(f32(7)) + 0.5}, {}),
    "erf": ("Erf", {}, {"x": 2 * f32(50)}, {}),
    "leaky_relu": ("LeakyRelu", {"alpha": 0.2}, {"x": f32(9)}, {}),
    "elu": ("Elu", {}, {"x": f32(9)}, {}),
    "hard_sigmoid": ("HardSigmoid", {}, {"x": 4 * f32(9)}, {}),
    "softplus": ("Softplus", {}, {"x": f32(9)}, {}),
    "floor": ("Floor", {}, {"x": 3 * f32(9)}, {}),
    "clip": (
        "Clip",
        {},
        {"x": f32(9)},
        {"lo": np.array(-0.5, np.float32), "hi": np.array(0.3, np.float32)},
    ),
    "max3": ("Max", {}, {"x": f32(3, 4), "y": f32(4), "z": f32(3, 1)}, {}),
    "sum": ("Sum", {}, {"x": f32(3, 4), "y": f32(3, 4)}, {}),
    "mean": ("Mean", {}, {"x": f32(3, 4), "y": f32(3, 4)}, {}),
    "matmul_2d_weight": ("MatMul", {}, {"x": f32(5, 8)}, {"w": f32(8, 3)}),
    "matmul_3d_by_2d": ("MatMul", {}, {"x": f32(2, 5, 8)}, {"w": f32(8, 3)}),
    "matmul_batched_broadcast": ("MatMul", {}, {"x": f32(2, 3, 4, 5), "y": f32(3, 5, 6)}, {}),
    "matmul_vector": ("MatMul", {}, {"x": f32(8)}, {"w": f32(8, 3)}),
    "gemm_transposed": (
        "Gemm",
        {"transB": 1, "alpha": 0.5, "beta": 2.0},
        {"x": f32(4, 6)},
        {"w": f32(3, 6), "b": f32(3)},
    ),
    "gemm_trans_a": ("Gemm", {"transA": 1}, {"x": f32(6, 4)}, {"w": f32(6, 3)}),
    "softmax_last": ("Softmax", {}, {"x": f32(3, 10)}, {}),
    "softmax_middle_axis": ("Softmax", {"axis": 1}, {"x": f32(2, 5, 3)}, {}),
    "log_softmax": ("LogSoftmax", {}, {"x": f32(3, 10)}, {}),
    "reshape": ("Reshape", {}, {"x": f32(2, 3, 4)}, {"s": i64(0, -1)}),
    "flatten": ("Flatten", {"axis": 2}, {"x": f32(2, 3, 4, 5)}, {}),
    "flatten_negative_axis": ("Flatten", {"axis": -1}, {"x": f32(2, 3, 4)}, {}),
    "batch_norm_statistics_fed": (
        "BatchNormalization",
        {"epsilon": 1e-3},
        {"x": f32(2, 3, 4), "s": f32(3), "b": f32(3), "m": f32(3), "v": np.abs(f32(3)) + 0.5},
        {},
    ),
    "mish": ("Mish", {}, {"x": f32(9)}, {}),
    "celu": ("Celu", {"alpha": 0.7}, {"x": f32(9)}, {}),
    "mod_fmod": ("Mod", {"fmod": 1}, {"x": 5 * f32(8)}, {"y": np.abs(f32(8)) + 1}),
    "mod_int": (
        "Mod",
        {},
        {"x": np.array([-7, 7, -3, 9], np.int64)},
        {"y": np.array([3, -4, 5, 2], np.int64)},
    ),
    "reduce_l2": ("ReduceL2", {"axes": [1]}, {"x": f32(3, 4, 5)}, {}),
    "reduce_l1": ("ReduceL1", {"axes": [-1], "keepdims": 0}, {"x": f32(3, 4)}, {}),
    "reduce_log_sum_exp": (
        "ReduceLogSumExp",
        {"axes": [0, 2], "keepdims": 0},
        {"x": 10 * f32(3, 4, 5)},
        {},
    ),
    "trilu_lower": ("Trilu", {"upper": 0}, {"x": f32(2, 5, 4)}, {"k": np.array(-1, np.int64)}),
    "trilu_upper": ("Trilu", {}, {"x": f32(4, 6)}, {}),
    "resize_nearest_scales": (
        "Resize",
        {"mode": "nearest"},
        {"x": f32(1, 2, 3, 4)},
        {"roi": np.zeros(0, np.float32), "sc": np.array([1, 1, 2, 3], np.float32)},
    ),
    "resize_nearest_sizes": (
        "Resize",
        {
            "mode": "nearest",
            "coordinate_transformation_mode": "asymmetric",
            "nearest_mode": "floor",
        },
        {"x": f32(1, 2, 3, 4)},
        {
            "roi": np.zeros(0, np.float32),
            "sc": np.zeros(0, np.float32),
            "sz": np.array([1, 2, 6, 8], np.int64),
        },
    ),
    "argmax": ("ArgMax", {"axis": 1}, {"x": f32(3, 7)}, {}),
    "argmin_no_keepdims": ("ArgMin", {"axis": 0, "keepdims": 0}, {"x": f32(5, 4)}, {}),
    "argmax_ties_first": (
        "ArgMax",
        {"axis": 1},
        {"x": np.array([[1, 3, 3, 0], [2, 2, -1, 2]], np.float32)},
        {},
    ),
    "argmax_ties_last": (
        "ArgMax",
        {"axis": 1, "select_last_index": 1},
        {"x": np.array([[1, 3, 3, 0], [2, 2, -1, 2]], np.float32)},
        {},
    ),
    "one_hot": (
        "OneHot",
        {"axis": 1},
        {"i": np.array([[0, 3], [-1, 2]], np.int64)},
        {"d": np.array(4, np.int64), "v": np.array([-2.0, 5.0], np.float32)},
    ),
    "transpose": ("Transpose", {"perm": [2, 0, 1]}, {"x": f32(2, 3, 4)}, {}),
    "concat": ("Concat", {"axis": 1}, {"x": f32(2, 3), "y": f32(2, 5)}, {"w": f32(2, 2)}),
    "slice_steps": (
        "Slice",
        {},
        {"x": f32(6, 8)},
        {"st": i64(1, 7), "en": i64(5, 0), "ax": i64(0, 1), "sp": i64(2, -2)},
    ),
    "slice_to_end": (
        "Slice",
        {},
        {"x": f32(6, 8)},
        {"st": i64(-3), "en": i64(2**63 - 1), "ax": i64(1)},
    ),
    "squeeze": ("Squeeze", {}, {"x": f32(3, 1, 4, 1)}, {"a": i64(1)}),
    "unsqueeze": ("Unsqueeze", {}, {"x": f32(3, 4)}, {"a": i64(0, -1)}),
    "expand": ("Expand", {}, {"x": f32(3, 1)}, {"s": i64(2, 3, 4)}),
    "tile": ("Tile", {}, {"x": f32(2, 3)}, {"r": i64(2, 2)}),
    "gather_constant_indices": (
        "Gather",
        {"axis": 1},
        {"x": f32(3, 5, 2)},
        {"i": np.array([[4, 0], [-1, 2]], np.int64)},
    ),
    "gather_traced_indices": (
        "Gather",
        {},
        {"table": f32(10, 4), "ids": np.array([[1, 9, 0], [3, -2, 3]], np.int64)},
        {},
    ),
    "reduce_mean": ("ReduceMean", {"axes": [1], "keepdims": 1}, {"x": f32(3, 4, 5)}, {}),
    "reduce_sum_all": ("ReduceSum", {"keepdims": 0}, {"x": f32(3, 4)}, {}),
    "reduce_max_axes": ("ReduceMax", {"axes": [0, 2], "keepdims": 0}, {"x": f32(3, 4, 5)}, {}),
    "layer_norm": (
        "LayerNormalization",
        {"epsilon": 1e-5},
        {"x": f32(2, 3, 8)},
        {"g": f32(8), "b": f32(8)},
    ),
    "batch_norm": (
        "BatchNormalization",
        {},
        {"x": f32(2, 3, 4, 4)},
        {"s": f32(3), "b": f32(3), "m": f32(3), "v": np.abs(f32(3)) + 0.5},
    ),
    "where": ("Where", {}, {"c": rng.random((3, 4)) > 0.5, "x": f32(3, 4)}, {"y": f32(4)}),
    "greater": ("Greater", {}, {"x": f32(3, 4)}, {"y": f32(4)}),
    "equal_int": (
        "Equal",
        {},
        {"x": np.array([1, 2, 3, 4], np.int64)},
        {"y": np.array([1, 0, 3, 0], np.int64)},
    ),
    "cast_to_int": ("Cast", {"to": TensorProto.INT64}, {"x": 5 * f32(6)}, {}),
    "cast_int_to_float": (
        "Cast",
        {"to": TensorProto.FLOAT},
        {"x": np.array([3, -1, 7], np.int64)},
        {},
    ),
    "dropout": ("Dropout", {}, {"x": f32(3, 4)}, {}),
    "identity": ("Identity", {}, {"x": f32(3, 4)}, {}),
    "add_int": (
        "Add",
        {},
        {"x": np.array([[1, 2], [3, 4]], np.int64)},
        {"y": np.array([10, -20], np.int64)},
    ),
    "conv_grouped_strided": (
        "Conv",
        {"group": 2, "strides": [2, 1], "pads": [1, 0, 2, 1]},
        {"x": f32(2, 4, 9, 8)},
        {"w": f32(6, 2, 3, 3), "b": f32(6)},
    ),
    "conv_dilated": (
        "Conv",
        {"dilations": [2, 2], "pads": [2, 1, 2, 1]},
        {"x": f32(1, 3, 7, 7)},
        {"w": f32(4, 3, 3, 3)},
    ),
    "conv_same_upper_strided": (
        "Conv",
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        {"x": f32(1, 3, 8, 8)},
        {"w": f32(4, 3, 4, 4)},
    ),
    "conv_same_lower": (
        "Conv",
        {"auto_pad": "SAME_LOWER"},
        {"x": f32(1, 2, 5, 5)},
        {"w": f32(3, 2, 2, 2)},
    ),
    "conv_depthwise_1d": (
        "Conv",
        {"group": 3, "pads": [1, 1]},
        {"x": f32(2, 3, 10)},
        {"w": f32(3, 1, 3)},
    ),
    "max_pool_ceil": (
        "MaxPool",
        {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
        {"x": f32(1, 3, 8, 8)},
        {},
    ),
    "avg_pool_pads": (
        "AveragePool",
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0},
        {"x": f32(2, 2, 5, 5)},
        {},
    ),
    "global_avg_pool": ("GlobalAveragePool", {}, {"x": f32(2, 5, 4, 3)}, {}),
    "global_max_pool": ("GlobalMaxPool", {}, {"x": f32(2, 5, 4, 3)}, {}),
    "lrn": (
        "LRN",
        {"size": 3, "alpha": 0.01, "beta": 0.75, "bias": 1.5},
        {"x": f32(2, 6, 3, 3)},
        {},
    ),
    "pad_reflect": ("Pad", {"mode": "reflect"}, {"x": f32(2, 5, 4)}, {"p": i64(0, 2, 1, 0, 3, 2)}),
    "pad_edge": ("Pad", {"mode": "edge"}, {"x": f32(3, 4)}, {"p": i64(1, 2, 2, 0)}),
    "pad_constant_crop": (
        "Pad",
        {},
        {"x": f32(3, 4)},
        {"p": i64(1, -1, 0, 2), "v": np.array(1.5, np.float32)},
    ),
    "instance_norm": (
        "InstanceNormalization",
        {},
        {"x": f32(2, 3, 4, 5)},
        {"s": f32(3), "b": f32(3)},
    ),
    "shrink": ("Shrink", {"lambd": 0.3, "bias": 0.1}, {"x": f32(20)}, {}),
}
OPSET = {
    "clip": 13,
    "split": 13,
    "mish": 18,
    "reduce_l2": 13,
    "reduce_l1": 13,
    "reduce_log_sum_exp": 13,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_onnx_operator_on_the_ipu_equals_onnxruntime(case):
    op, attrs, feeds, weights = CASES[case]
    node = helper.make_node(op, [*feeds, *weights], ["out"], name=f"{case}_node", **attrs)
    model = make_model([node], feeds, ["out"], weights, opset=OPSET.get(case, 17))
    session = assert_matches_ort(model, feeds, rtol=1e-4, atol=1e-5)
    assert session.last is not None  # it ran on the engine, not folded on the host


def test_split_outputs_are_views_of_the_input_and_equal_onnxruntime():
    x = f32(4, 9)
    node = helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1)
    model = make_model([node], {"x": x}, ["a", "b", "c"], {"sizes": i64(2, 3, 4)}, opset=13)
    assert_matches_ort(model, {"x": x})
    node = helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)
    model = make_model([node], {"x": x}, ["a", "b", "c"], opset=18)
    assert_matches_ort(model, {"x": x})


def _with_float_output(node, feeds, weights, shape, opset):
    """A model of one function-defined node, whose output shape inference leaves untyped."""
    from onnx import TensorProto

    first = next(iter(feeds))
    model = make_model(
        [helper.make_node("Identity", [first], ["x1"])], feeds, ["x1"], weights, opset=opset
    )
    node.input[0] = "x1"
    model.graph.node.append(node)
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("out", TensorProto.FLOAT, shape))
    return model


def test_mean_variance_normalization_equals_onnxruntime():
    x = f32(2, 3, 4, 4)
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["out"])
    assert_matches_ort(_with_float_output(node, {"x": x}, {}, x.shape, 17), {"x": x})


def test_group_normalization_equals_onnxruntime():
    x = f32(2, 4, 3, 3)
    node = helper.make_node(
        "GroupNormalization", ["x", "s", "b"], ["out"], num_groups=2, epsilon=1e-5
    )
    model = _with_float_output(node, {"x": x}, {"s": f32(4), "b": f32(4)}, x.shape, 21)
    assert_matches_ort(model, {"x": x})
