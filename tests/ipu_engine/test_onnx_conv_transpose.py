"""ConvTranspose (issue 39: decoders, GANs, segmentation) equals onnxruntime: strides,
groups, dilations, pads, output_padding, output_shape and auto_pad, 1-D and 2-D, weights in
the model or fed; a phase without taps (kernel smaller than the stride) is the bias alone.
Each stride phase is one poplin convolution, none of them multiplying inserted zeros."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from ipu_engine.onnx import InferenceSession
from tests.ipu_engine.onnx_helpers import SMALL, assert_matches_ort, make_model

rng = np.random.default_rng(3390)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = {
    # name: (x shape, w shape [C, F/g, k...], attrs, bias)
    "decoder_s2_k3_p1_op1": ((1, 4, 5, 6), (4, 3, 3, 3),
                             {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
                             True),
    "dcgan_s2_k4_p1": ((2, 3, 4, 4), (3, 2, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]},
                       False),
    "groups_dilation": ((1, 4, 4, 5), (4, 3, 3, 2),
                        {"strides": [2, 1], "dilations": [2, 2], "group": 2}, True),
    "kernel_below_stride": ((1, 2, 3, 3), (2, 2, 2, 2), {"strides": [3, 3]}, True),
    "kernel_below_stride_no_bias": ((1, 2, 3, 2), (2, 2, 1, 2), {"strides": [3, 2]}, False),
    "depthwise": ((1, 3, 4, 4), (3, 1, 3, 3), {"strides": [2, 2], "group": 3}, True),
    "same_upper": ((1, 2, 5, 4), (2, 3, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
                   False),
    "same_lower": ((1, 2, 5, 4), (2, 3, 4, 3), {"strides": [2, 2], "auto_pad": "SAME_LOWER"},
                   True),
    "output_shape": ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [3, 2], "output_shape": [10, 8]},
                     True),
    "asymmetric_pads": ((1, 2, 4, 4), (2, 2, 3, 3), {"strides": [2, 2], "pads": [0, 2, 1, 0]},
                        True),
    "one_d": ((2, 3, 7), (3, 4, 3), {"strides": [2], "pads": [1, 0], "output_padding": [1]},
              True),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_conv_transpose_matches_onnxruntime(case):
    x_shape, w_shape, attrs, with_bias = CASES[case]
    groups = attrs.get("group", 1)
    weights = {"w": f32(*w_shape)}
    if with_bias:
        weights["b"] = f32(w_shape[1] * groups)
    node = helper.make_node("ConvTranspose", ["x", *weights], ["y"], name="deconv", **attrs)
    feeds = {"x": f32(*x_shape)}
    assert_matches_ort(make_model([node], feeds, ["y"], weights), feeds, rtol=1e-4, atol=1e-5)


def test_weights_fed_at_run_time():
    feeds = {"x": f32(1, 4, 3, 3), "w": f32(4, 1, 2, 3), "b": f32(2)}
    node = helper.make_node(
        "ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], group=2, pads=[0, 1, 0, 1]
    )
    assert_matches_ort(make_model([node], feeds, ["y"]), feeds, rtol=1e-4, atol=1e-5)


def test_each_phase_is_one_convolution_of_the_undilated_input():
    """Stride 2 in both dimensions: four convolutions, each of a quarter of the kernel and
    of the input as it is -- no convolution sees a zero-dilated input."""
    feeds = {"x": f32(1, 3, 6, 6)}
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])
    model = make_model([node], feeds, ["y"], {"w": f32(3, 5, 4, 4)})
    session = InferenceSession(model, options=SMALL)
    session.run(None, feeds)
    graph = session.last.graph
    convs = [c for c in graph.debug.items if c.api == "poplin::convolution"]
    assert len(convs) == 4
    assert all(c.args["in"] == [1, 6, 6, 3] and c.args["weights"] == [2, 2, 3, 5] for c in convs)
    outer = [c for c in graph.debug.items if c.api == "poplin::convolution (transposed)"]
    assert len(outer) == 1 and outer[0].args["phases"] == 4
