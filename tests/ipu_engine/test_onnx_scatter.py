"""ScatterND and ScatterElements (issue 39: Swin's window merges, KV caches) equal
onnxruntime: indices fed at run time or known in the model, every reduction, negative
indices, updates smaller than the data; an index out of range stops the run naming it."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from ipu_engine.onnx import InferenceSession, OnnxError
from tests.ipu_engine.onnx_helpers import SMALL, assert_matches_ort, make_model

rng = np.random.default_rng(391)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _model(op, feeds, weights, opset=18, **attrs):
    node = helper.make_node(op, ["data", "indices", "updates"], ["y"], name="scatter", **attrs)
    return make_model([node], feeds, ["y"], weights, opset=opset)


ND_CASES = {
    # name: (data shape, indices, updates shape, reduction, indices fed at run time)
    "rows_fed": ((6, 4), [[1], [4], [0]], (3, 4), "none", True),
    "elements_const": ((3, 4, 2), [[0, 1, 1], [2, 3, 0]], (2,), "none", False),
    "slices_negative": ((4, 5, 3), [[-1, 0], [1, -2]], (2, 3), "none", True),
    "kv_cache_rows": ((2, 8, 6), [[[0, 5]], [[1, 7]]], (2, 1, 6), "none", True),
    "add_repeated": ((5, 3), [[1], [1], [3]], (3, 3), "add", True),
    "mul": ((5, 3), [[2], [0]], (2, 3), "mul", False),
    "max_repeated": ((4, 4), [[0, 0], [0, 0], [3, 1]], (3,), "max", True),
    "min": ((4, 4), [[1], [3]], (2, 4), "min", True),
}


@pytest.mark.parametrize("case", ND_CASES)
def test_scatter_nd_matches_onnxruntime(case):
    shape, index, updates_shape, reduction, fed = ND_CASES[case]
    indices = np.array(index, np.int64)
    feeds = {"data": f32(*shape), "updates": f32(*updates_shape)}
    weights = {}
    (feeds if fed else weights)["indices"] = indices
    attrs = {} if reduction == "none" else {"reduction": reduction}
    assert_matches_ort(_model("ScatterND", feeds, weights, **attrs), feeds, rtol=0, atol=0)


ELEMENT_CASES = {
    # name: (data shape, indices, axis, reduction)
    "axis0": ((3, 4), [[1, 0, 2, 0], [2, 1, 0, 1]], 0, "none"),
    "axis1_smaller": ((3, 5), [[4, 0], [1, 3]], 1, "none"),
    "negative_axis": ((2, 3, 4), [[[-1, 0, 2]], [[1, -4, 3]]], -1, "none"),
    "middle_axis_add": ((2, 4, 3), [[[3, 0, 3], [3, 1, 0]], [[0, 0, 0], [2, 2, 2]]], 1, "add"),
    "mul": ((4, 3), [[0, 1, 2], [0, 1, 2]], 0, "mul"),
    "max": ((3, 3), [[2, 2, 0], [2, 2, 1]], 1, "max"),
    "min": ((3, 3), [[1, 1], [0, 0], [2, 1]], 1, "min"),
}


@pytest.mark.parametrize("fed", [True, False], ids=["fed", "const"])
@pytest.mark.parametrize("case", ELEMENT_CASES)
def test_scatter_elements_matches_onnxruntime(case, fed):
    shape, index, axis, reduction = ELEMENT_CASES[case]
    indices = np.array(index, np.int64)
    feeds = {"data": f32(*shape), "updates": f32(*indices.shape)}
    weights = {}
    (feeds if fed else weights)["indices"] = indices
    attrs = {"axis": axis} | ({} if reduction == "none" else {"reduction": reduction})
    assert_matches_ort(_model("ScatterElements", feeds, weights, **attrs), feeds, rtol=0, atol=0)


def test_integer_data_and_weights_as_data():
    """int64 data (int32 on the IPU) fed, and float data held in the model as a weight."""
    data = rng.integers(-50, 50, (4, 3)).astype(np.int64)
    feeds = {"data": data, "updates": rng.integers(-9, 9, (2, 3)).astype(np.int64),
             "indices": np.array([[3], [0]], np.int64)}  # fmt: skip
    assert_matches_ort(_model("ScatterND", feeds, {}, reduction="add"), feeds, rtol=0, atol=0)
    feeds = {"updates": f32(2, 3), "indices": np.array([[0, 2, 1], [3, 0, 0]], np.int64)}
    model = _model("ScatterElements", feeds, {"data": f32(4, 3)})
    assert_matches_ort(model, feeds, rtol=0, atol=0)


def test_the_older_scatter_is_scatter_elements():
    feeds = {"data": f32(3, 3), "updates": f32(2, 3), "indices": np.array([[1, 0, 2], [0, 2, 1]])}
    assert_matches_ort(_model("Scatter", feeds, {}, opset=10, axis=0), feeds, rtol=0, atol=0)


def test_a_run_time_index_out_of_range_stops_the_run_naming_it():
    feeds = {"data": f32(4, 2), "updates": f32(1, 2), "indices": np.array([[4]], np.int64)}
    session = InferenceSession(_model("ScatterND", feeds, {}), options=SMALL)
    with pytest.raises(OnnxError, match=r"index 4 is out of range for a dimension of 4 "
                       r"\(valid: -4 to 3\)"):  # fmt: skip
        session.run(None, feeds)


def test_a_model_index_out_of_range_names_the_node():
    feeds = {"data": f32(4, 2), "updates": f32(1, 2)}
    model = _model("ScatterElements", feeds, {"indices": np.array([[0, 9]], np.int64)}, axis=1)
    with pytest.raises(OnnxError, match=r"node 'scatter' \(ScatterElements, opset 18\): index 9 "
                       r"is out of range for a dimension of 2"):  # fmt: skip
        InferenceSession(model, options=SMALL).run(None, feeds)
