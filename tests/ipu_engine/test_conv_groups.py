"""poplin.convolution's grouped / depthwise form, per-dimension strides, asymmetric pads,
dilation and bias, against numpy's definition of ONNX's Conv (float32 and float16)."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, HALF, Graph, IPUModel, Sequence, ShapeError, TypeMismatchError, poplin
from ipu_engine.poplin import ConvShape, plan_convolution
from tests.ipu_engine.op_harness import op_contexts, run_op

RNG = np.random.default_rng(27)


def reference_conv(x, w, stride, pads, dilation, groups, bias=None) -> np.ndarray:
    """out[n,i,j,g*Fg+f] = sum over a,b,c of xpad[n, i*sh + a*dh, j*sw + b*dw, g*Cg+c]
    * w[a, b, c, g*Fg+f] (+ bias), by windows of the padded input and one einsum."""
    n, _, _, c = x.shape
    kh, kw, cg, f = w.shape
    (sh, sw), (dh, dw), ((pt, pb), (pl, pr)) = stride, dilation, pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    fh, fw = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    oh, ow = (xp.shape[1] - fh) // sh + 1, (xp.shape[2] - fw) // sw + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (fh, fw), axis=(1, 2))
    win = win[:, ::sh, ::sw][:, :oh, :ow, :, ::dh, ::dw]  # n, oh, ow, c, kh, kw
    win = win.reshape(n, oh, ow, groups, cg, kh, kw)
    wg = w.astype(np.float64).reshape(kh, kw, cg, groups, f // groups)
    out = np.einsum("nijgcab,abcgf->nijgf", win, wg).reshape(n, oh, ow, f)
    return out if bias is None else out + bias.astype(np.float64)


def conv_case(x, w, bias=None, tiles=32, **kwargs) -> tuple[Graph, np.ndarray]:
    inputs = {"x": x, "w": w} if bias is None else {"x": x, "w": w, "b": bias}

    def build(graph, t, prog):
        return poplin.convolution(graph, t["x"], t["w"], prog, "y", bias=t.get("b"), **kwargs)

    graph, out = run_op(build, inputs, tiles)
    return graph, out["out"]


def close(got: np.ndarray, want: np.ndarray, tolerance: float) -> bool:
    assert got.shape == want.shape
    return float(np.max(np.abs(got - want))) <= tolerance * float(np.max(np.abs(want)))


CASES = [
    # x shape, w shape, groups, stride, padding, dilation, bias
    ((2, 7, 9, 12), (3, 3, 4, 9), 3, (1, 2), ((1, 1), (0, 1)), (1, 1), False),
    ((1, 11, 10, 6), (3, 3, 1, 6), 6, (1, 1), ((2, 2), (1, 1)), (2, 1), False),  # depthwise
    ((1, 8, 8, 5), (3, 3, 5, 7), 1, (2, 2), ((0, 1), (0, 1)), (1, 1), True),  # pads (0, 1)
    ((3, 1, 1, 8), (1, 1, 4, 10), 2, (1, 1), ((0, 0), (0, 0)), (1, 1), True),  # 1x1 spatial
    ((2, 5, 13, 33), (2, 3, 11, 6), 3, (3, 1), ((1, 0), (2, 1)), (2, 2), True),  # odd sizes
]


@pytest.mark.parametrize(("xs", "ws", "groups", "stride", "pads", "dilation", "with_bias"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_grouped_convolution_equals_numpy(
    xs, ws, groups, stride, pads, dilation, with_bias, dtype
) -> None:
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    bias = RNG.standard_normal(ws[3]).astype(dtype) if with_bias else None
    _, got = conv_case(x, w, bias, groups=groups, stride=stride, padding=pads, dilation=dilation)
    want = reference_conv(x, w, stride, pads, dilation, groups, bias)
    assert got.dtype == dtype
    assert close(got, want, 1e-5 if dtype == np.float32 else 4e-3)


def test_padding_wider_than_the_kernel_gives_bias_only_borders() -> None:
    """Rows and columns whose windows see only padding: their vertices read no input."""
    x = RNG.standard_normal((2, 3, 3, 2)).astype(np.float32)
    w = RNG.standard_normal((1, 1, 2, 3)).astype(np.float32)
    bias = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    pads = ((2, 2), (3, 1))
    _, got = conv_case(x, w, bias, padding=pads)
    want = reference_conv(x, w, (1, 1), pads, (1, 1), 1, bias)
    assert got.shape == (2, 7, 7, 3)
    assert close(got, want, 1e-6)
    assert (got[:, :2] == bias).all() and (got[:, :, :3] == bias).all()


def test_default_padding_keeps_the_size_with_dilation() -> None:
    x = RNG.standard_normal((1, 9, 8, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4, 5)).astype(np.float32)
    _, got = conv_case(x, w, dilation=(2, 3))  # "same": pads (2, 2) and (3, 3)
    want = reference_conv(x, w, (1, 1), ((2, 2), (3, 3)), (2, 3), 1)
    assert got.shape == (1, 9, 8, 5) and close(got, want, 1e-5)


def test_bias_is_added_once_when_input_channels_are_split() -> None:
    x = RNG.standard_normal((1, 12, 9, 16)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 16, 6)).astype(np.float32)
    bias = (RNG.standard_normal(6) * 10).astype(np.float32)
    options = {"availableMemoryProportion": 0.002}  # a tight budget splits input channels
    plan = plan_convolution(ConvShape(1, 12, 9, 16, 6, 3, 3, 1, 1), 4, "float", 32, 638976, 0.002)
    assert plan.in_chan_blocks > 1
    graph, got = conv_case(x, w, bias, options=options)
    assert close(got, reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1, bias), 1e-5)
    assert any(cs.name.endswith("Reduce") for cs in graph.compute_sets)


def test_depthwise_544_channels_is_one_op_over_the_whole_ipu() -> None:
    """ShuffleNet's depthwise layer: one op, one Convolve compute set whose vertices cover
    every group, spread over the IPU's tiles (not 544 ops)."""
    x = RNG.standard_normal((1, 7, 7, 544)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 1, 544)).astype(np.float32)
    graph, got = conv_case(x, w, tiles=1472, groups=544, stride=1, padding=1)
    assert close(got, reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 544), 1e-5)
    assert len(op_contexts(graph, "poplin::convolution")) == 1
    convolve = [cs for cs in graph.compute_sets if cs.name.endswith("Convolve")]
    assert len(convolve) == 1
    blocks = convolve[0].blocks
    covered = sum(int((b.state["groups"] * b.state["outRows"]).sum()) for b in blocks)
    assert covered == 544 * 7  # each group's 7 output rows computed exactly once
    assert np.unique(np.concatenate([b.tiles for b in blocks])).size > 1000


def test_depthwise_plan_splits_the_groups() -> None:
    shape = ConvShape(1, 7, 7, 544, 544, 3, 3, 1, 1, groups=544)
    plan = plan_convolution(shape, 4, "float", 1472, 638976)
    assert plan.group_blocks > 1
    assert plan.group_blocks * plan.groups >= 544 > (plan.group_blocks - 1) * plan.groups


def test_shape_keeps_ints_as_pairs() -> None:
    shape = ConvShape(1, 10, 12, 4, 4, 3, 3, 2, 1)
    assert shape.stride == (2, 2) and shape.padding == ((1, 1), (1, 1))
    assert (shape.out_height, shape.out_width) == (5, 6)
    dilated = ConvShape(1, 10, 12, 4, 4, 3, 3, 1, ((0, 1), (2, 0)), dilation=(2, 3))
    assert (dilated.out_height, dilated.out_width) == (10 + 1 - 5 + 1, 12 + 2 - 7 + 1)


def _graph() -> Graph:
    return Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)


@pytest.mark.parametrize(
    ("w_shape", "kwargs", "message"),
    [
        ((3, 3, 5, 6), {"groups": 3}, r"'w' \(3, 3, 5, 6\).*3 group"),
        ((3, 3, 4, 7), {"groups": 3}, "groups 3 must divide the output channels of 'w'"),
        ((3, 3, 12, 6), {"groups": 0}, "groups must be at least 1"),
        ((3, 3, 12, 6), {"stride": (0, 1)}, r"stride \(0, 1\) must be at least 1"),
        ((3, 3, 12, 6), {"padding": ((1, -1), (0, 0))}, "padding.*at least 0"),
        ((3, 3, 12, 6), {"dilation": (1, 2, 3)}, "dilation must be an int or"),
        ((9, 3, 12, 6), {"padding": 0}, "leave no output for 'x'"),
    ],
)
def test_bad_arguments_name_the_op_and_tensors(w_shape, kwargs, message) -> None:
    graph = _graph()
    x = graph.add_variable(FLOAT, [1, 5, 5, 12], "x")
    w = graph.add_variable(FLOAT, list(w_shape), "w")
    with pytest.raises(ShapeError, match="poplin::convolution: " + ".*" + message):
        poplin.convolution(graph, x, w, Sequence(), **kwargs)


def test_bad_bias_names_the_bias() -> None:
    graph = _graph()
    x = graph.add_variable(FLOAT, [1, 5, 5, 4], "x")
    w = graph.add_variable(FLOAT, [3, 3, 4, 6], "w")
    with pytest.raises(ShapeError, match=r"bias 'b' \(5,\) must be \[F\] = \[6\]"):
        poplin.convolution(graph, x, w, Sequence(), bias=graph.add_variable(FLOAT, [5], "b"))
    with pytest.raises(TypeMismatchError, match="bias 'h' is HALF"):
        poplin.convolution(graph, x, w, Sequence(), bias=graph.add_variable(HALF, [6], "h"))
