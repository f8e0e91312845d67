"""popnn.lrn (ONNX LRN across channels) against a numpy loop over ONNX's formula: odd and
even window sizes, AlexNet's parameters, float32 and float16."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu_engine import INT, Graph, IPUModel, Sequence, ShapeError, TypeMismatchError, popnn
from ipu_engine.popnn.response_norm import channel_window
from tests.ipu_engine.op_harness import op_contexts, run_op

RNG = np.random.default_rng(3)


def reference_lrn(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """ONNX: square_sum[.., c] = sum of x[.., i]^2 for i in [max(0, c - floor((size-1)/2)),
    min(C-1, c + ceil((size-1)/2))]; y = x / (bias + alpha / size * square_sum) ** beta."""
    x = x.astype(np.float64)
    channels = x.shape[-1]
    out = np.empty_like(x)
    for c in range(channels):
        lo = max(0, c - math.floor((size - 1) / 2))
        hi = min(channels - 1, c + math.ceil((size - 1) / 2))
        square_sum = np.sum(x[..., lo : hi + 1] ** 2, axis=-1)
        out[..., c] = x[..., c] / (bias + alpha / size * square_sum) ** beta
    return out


@pytest.mark.parametrize(
    ("shape", "size", "alpha", "beta", "bias"),
    [
        ((1, 5, 5, 16), 5, 1e-4, 0.75, 1.0),  # AlexNet's
        ((2, 3, 4, 7), 4, 0.5, 0.6, 2.0),  # an even window reaches further up
        ((3, 1, 1, 5), 3, 1.0, 1.0, 0.5),  # 1x1 spatial
        ((1, 2, 3, 1), 1, 0.3, 0.75, 1.0),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_lrn_equals_numpy(shape, size, alpha, beta, bias, dtype) -> None:
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    graph, out = run_op(
        lambda g, t, prog: popnn.lrn(g, t["x"], size, prog, alpha=alpha, beta=beta, bias=bias),
        {"x": x},
    )
    want = reference_lrn(x, size, alpha, beta, bias)
    got = out["out"]
    assert got.dtype == dtype and got.shape == want.shape
    tolerance = 1e-5 if dtype == np.float32 else 5e-3
    assert np.max(np.abs(got - want)) <= tolerance * max(1.0, np.max(np.abs(want)))
    assert len(op_contexts(graph, "popnn::lrn")) == 1


def test_channel_window_by_hand() -> None:
    # size 4 on 5 channels: channel c sees c-1 .. c+2
    assert channel_window(5, 4).T.tolist() == [
        [1, 1, 1, 0, 0],
        [1, 1, 1, 1, 0],
        [0, 1, 1, 1, 1],
        [0, 0, 1, 1, 1],
        [0, 0, 0, 1, 1],
    ]


def test_bad_arguments() -> None:
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)
    with pytest.raises(TypeMismatchError, match="popnn::lrn: needs float or half, 'i'"):
        popnn.lrn(graph, graph.add_variable(INT, [1, 2, 2, 3], "i"), 3, Sequence())
    x = graph.add_variable(np.float32, [1, 2, 2, 3], "x")
    with pytest.raises(ShapeError, match="size >= 1; got 'x'"):
        popnn.lrn(graph, x, 0, Sequence())
    with pytest.raises(ShapeError, match=r"popnn::lrn: beta must be a number, got '0.75' \(str\)"):
        popnn.lrn(graph, x, 3, Sequence(), beta="0.75")
