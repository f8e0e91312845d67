"""Resize beyond nearest (issue 39: segmentation heads, decoders) equals onnxruntime: linear
and cubic, every coordinate transformation mode torch and TF write, crops with an
extrapolation value, antialiasing, axes; whole-factor nearest passes are views, the rest
``popops::resample`` compute sets."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from ipu_engine.onnx import InferenceSession, OnnxError
from tests.ipu_engine.onnx_helpers import SMALL, assert_matches_ort, make_model

rng = np.random.default_rng(3939)
X = rng.standard_normal((1, 2, 5, 7)).astype(np.float32)
EMPTY = np.zeros(0, np.float32)


def _resize(x, attrs, scales=None, sizes=None, roi=None, opset=19, fed=()):
    """A Resize of input ``x`` whose roi / scales / sizes are weights, or inputs (``fed``)."""
    values = {"roi": EMPTY if roi is None else np.array(roi, np.float32),
              "scales": EMPTY if scales is None else np.array(scales, np.float32),
              "sizes": None if sizes is None else np.array(sizes, np.int64)}  # fmt: skip
    names = ["x", "roi", "scales"] + (["sizes"] if sizes is not None else [])
    node = helper.make_node("Resize", names, ["y"], name="resize", **attrs)
    feeds = {"x": x} | {k: values[k] for k in fed}
    weights = {k: values[k] for k in names[1:] if k not in fed}
    return make_model([node], feeds, ["y"], weights, opset=opset), feeds


CASES = {
    # name: (attrs, scales, sizes, roi)
    "linear_half_pixel_x2": ({"mode": "linear"}, [1, 1, 2, 2], None, None),
    "linear_pytorch_half_pixel_sizes": (
        {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
        None, [1, 2, 8, 11], None,
    ),
    "linear_align_corners_down": (
        {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
        None, [1, 2, 3, 4], None,
    ),
    "linear_asymmetric_1_5": (
        {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
        [1, 1, 1.5, 1.5], None, None,
    ),
    "cubic_half_pixel": ({"mode": "cubic"}, None, [1, 2, 9, 12], None),
    "cubic_align_corners": (
        {"mode": "cubic", "coordinate_transformation_mode": "align_corners"},
        [1, 1, 2, 2], None, None,
    ),
    "cubic_tf_asymmetric": (
        {"mode": "cubic", "coordinate_transformation_mode": "asymmetric", "cubic_coeff_a": -0.5},
        [1, 1, 1.6, 0.8], None, None,
    ),
    "cubic_exclude_outside": (
        {"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}, None, [1, 2, 3, 10], None,
    ),
    "tf_crop_and_resize_linear": (
        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
         "extrapolation_value": 7.5},
        None, [1, 2, 6, 6], [0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4],
    ),
    "tf_crop_and_resize_nearest": (
        {"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize"},
        None, [1, 2, 4, 3], [0, 0, 0.1, 0.2, 1, 1, 0.8, 0.7],
    ),
    "nearest_fraction_ceil": (
        {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, [1, 1, 1.5, 1.3], None, None,
    ),
    "nearest_half_down_view": (
        {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
         "nearest_mode": "floor"},
        None, [1, 2, 3, 4], None,
    ),
    "nearest_tf_half_pixel_for_nn": (
        {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn"},
        [1, 1, 2.5, 0.6], None, None,
    ),
    "linear_antialias_down": ({"mode": "linear", "antialias": 1}, None, [1, 2, 3, 3], None),
    "cubic_antialias_down": ({"mode": "cubic", "antialias": 1}, [1, 1, 0.6, 0.45], None, None),
    "half_pixel_symmetric": (
        {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
        [1, 1, 1.7, 0.7], None, None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_resize_matches_onnxruntime(case):
    attrs, scales, sizes, roi = CASES[case]
    model, feeds = _resize(X, attrs, scales, sizes, roi)
    assert_matches_ort(model, feeds, rtol=1e-5, atol=2e-6)


def test_axes_and_a_kept_aspect_ratio():
    model, feeds = _resize(X, {"mode": "linear", "axes": [3, 2],
                               "keep_aspect_ratio_policy": "not_larger"}, sizes=[10, 9])  # fmt: skip
    assert_matches_ort(model, feeds, rtol=1e-5, atol=2e-6)


def test_a_1d_resize_of_a_sequence():
    x = rng.standard_normal((2, 3, 9)).astype(np.float32)
    model, feeds = _resize(x, {"mode": "linear"}, scales=[1, 1, 1.75])
    assert_matches_ort(model, feeds, rtol=1e-5, atol=2e-6)


def test_scales_fed_at_run_time_compile_one_program_per_value():
    model, feeds = _resize(X, {"mode": "linear"}, scales=[1, 1, 2, 1.5], fed=("scales",))
    session = assert_matches_ort(model, feeds, rtol=1e-5, atol=2e-6)
    other = feeds | {"scales": np.array([1, 1, 0.5, 1], np.float32)}
    (y,) = session.run(None, other)
    assert y.shape == (1, 2, 2, 7)
    assert len(session._programs) == 2


def test_upsample_linear_of_opset_9():
    node = helper.make_node("Upsample", ["x", "s"], ["y"], mode="linear")
    feeds = {"x": X}
    model = make_model([node], feeds, ["y"], {"s": np.array([1, 1, 2, 3], np.float32)}, opset=9)
    assert_matches_ort(model, feeds, rtol=1e-5, atol=2e-6)


def test_whole_factor_nearest_passes_are_views_and_others_compute():
    model, feeds = _resize(X, {"mode": "nearest"}, scales=[1, 1, 2, 3])
    session = InferenceSession(model, options=SMALL)
    session.run(None, feeds)
    ops = {n.op for n in session.last.traced.trace.nodes}
    assert "resample" not in ops and "broadcast" in ops
    model, feeds = _resize(X, {"mode": "linear"}, scales=[1, 1, 2, 3])
    session = InferenceSession(model, options=SMALL)
    session.run(None, feeds)
    assert [n.op for n in session.last.traced.trace.nodes].count("resample") == 2


def test_linear_integer_data_and_nearest_antialias_are_refused_naming_the_node():
    ints = np.arange(20, dtype=np.int32).reshape(1, 1, 4, 5)
    model, feeds = _resize(ints, {"mode": "linear"}, scales=[1, 1, 2, 2])
    with pytest.raises(OnnxError, match=r"node 'resize' \(Resize, opset 19\): mode 'linear' of "
                       "integer data is not supported"):  # fmt: skip
        InferenceSession(model, options=SMALL).run(None, feeds)
    model, feeds = _resize(X, {"mode": "nearest", "antialias": 1}, scales=[1, 1, 0.5, 0.5])
    with pytest.raises(OnnxError, match="antialias=1 applies to linear and cubic"):
        InferenceSession(model, options=SMALL).run(None, feeds)
