"""popnn.max_pool / avg_pool / global_avg_pool against numpy loops over ONNX's definition
of MaxPool / AveragePool (float32 and float16), hand-computed cases and bad arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ipu_engine import FLOAT, INT, Graph, IPUModel, Sequence, ShapeError, TypeMismatchError, popnn
from tests.ipu_engine.op_harness import op_contexts, run_op

RNG = np.random.default_rng(2)


def out_size(size: int, k: int, s: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """ONNX's output size; in ceil mode a window may not start in the end padding."""
    rounding = math.ceil if ceil_mode else math.floor
    out = int(rounding((size + lo + hi - k) / s)) + 1
    return out - 1 if ceil_mode and (out - 1) * s >= size + lo else out


def reference_pool(x, kind, kernel, stride, pads, ceil_mode=False, count_pad=False):
    """Loop over every output cell: the window's image cells (padding never wins a max);
    an average divides by them, or with count_pad by the window's cells inside the
    padded image."""
    n, h, w, c = x.shape
    (kh, kw), (sh, sw), ((pt, pb), (pl, pr)) = kernel, stride, pads
    oh, ow = out_size(h, kh, sh, pt, pb, ceil_mode), out_size(w, kw, sw, pl, pr, ceil_mode)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            top, left = i * sh - pt, j * sw - pl
            rows = range(max(top, 0), min(top + kh, h))
            cols = range(max(left, 0), min(left + kw, w))
            cells = x[:, rows.start : rows.stop, cols.start : cols.stop].astype(np.float64)
            if kind == "max":
                out[:, i, j] = cells.max(axis=(1, 2))
                continue
            if count_pad:
                count = (min(top + kh, h + pb) - max(top, -pt)) * (
                    min(left + kw, w + pr) - max(left, -pl)
                )
            else:
                count = len(rows) * len(cols)
            out[:, i, j] = cells.sum(axis=(1, 2)) / count
    return out


def pool(kind, x, kernel, tiles=32, **kwargs) -> tuple[Graph, np.ndarray]:
    fn = popnn.max_pool if kind == "max" else popnn.avg_pool
    graph, out = run_op(
        lambda g, t, prog: fn(g, t["x"], kernel, prog, "p", **kwargs), {"x": x}, tiles
    )
    return graph, out["out"]


CASES = [
    # x shape, kernel, stride, pads, ceil_mode, count_include_pad
    ((2, 9, 11, 5), (3, 3), (2, 2), ((1, 1), (1, 1)), False, False),  # ResNet's stem pool
    ((1, 10, 7, 3), (2, 3), (2, 1), ((0, 1), (1, 0)), True, False),
    ((3, 8, 8, 37), (3, 3), (3, 3), ((1, 0), (0, 2)), True, True),
    ((1, 1, 1, 6), (1, 1), (1, 1), ((0, 0), (0, 0)), False, False),  # 1x1 spatial
    ((2, 13, 6, 70), (5, 2), (1, 2), ((2, 2), (0, 1)), False, True),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(("xs", "kernel", "stride", "pads", "ceil_mode", "count_pad"), CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_pooling_equals_numpy(kind, xs, kernel, stride, pads, ceil_mode, count_pad, dtype) -> None:
    x = RNG.standard_normal(xs).astype(dtype)
    kwargs = {"stride": stride, "padding": pads, "ceil_mode": ceil_mode}
    if kind == "avg":
        kwargs["count_include_pad"] = count_pad
    _, got = pool(kind, x, kernel, **kwargs)
    want = reference_pool(x, kind, kernel, stride, pads, ceil_mode, count_pad)
    assert got.shape == want.shape and got.dtype == dtype
    tolerance = 1e-6 if dtype == np.float32 else 2e-3
    assert np.max(np.abs(got - want)) <= tolerance * max(1.0, np.max(np.abs(want)))


def test_hand_computed_windows() -> None:
    row = np.arange(1, 8, dtype=np.float32).reshape(1, 1, 7, 1)
    _, got = pool("avg", row, (1, 3), stride=(1, 2))  # PyTorch's AvgPool1d example
    assert got.reshape(-1).tolist() == [2.0, 4.0, 6.0]
    five = np.arange(1, 6, dtype=np.float32).reshape(1, 1, 5, 1)
    pads = ((0, 0), (0, 1))
    _, counted = pool("avg", five, (1, 2), stride=(1, 2), padding=pads, ceil_mode=True,
                      count_include_pad=True)  # fmt: skip
    _, uncounted = pool("avg", five, (1, 2), stride=(1, 2), padding=pads, ceil_mode=True)
    assert counted.reshape(-1).tolist() == [1.5, 3.5, 2.5]  # (5 + pad) / 2
    assert uncounted.reshape(-1).tolist() == [1.5, 3.5, 5.0]
    # ceil mode drops a window starting in the right padding: 2 outputs, not 3
    negative = -np.arange(1, 5, dtype=np.float32).reshape(1, 1, 4, 1)
    _, peak = pool("max", negative, (1, 2), stride=(1, 3), padding=((0, 0), (1, 1)), ceil_mode=True)
    assert peak.reshape(-1).tolist() == [-1.0, -3.0]  # padded cells (zeros) never win


def test_pooling_spreads_one_compute_set_over_the_tiles() -> None:
    x = RNG.standard_normal((1, 56, 56, 64)).astype(np.float32)
    graph, got = pool("max", x, (3, 3), tiles=1472, stride=(2, 2), padding=1)
    want = reference_pool(x, "max", (3, 3), (2, 2), ((1, 1), (1, 1)))
    assert np.array_equal(got, want.astype(np.float32))
    assert len(op_contexts(graph, "popnn::maxPool")) == 1
    pools = [cs for cs in graph.compute_sets if cs.name.endswith("Pool")]
    assert len(pools) == 1
    assert np.unique(np.concatenate([b.tiles for b in pools[0].blocks])).size > 700


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_global_avg_pool_is_the_spatial_mean(dtype) -> None:
    x = RNG.standard_normal((3, 7, 5, 19)).astype(dtype)
    graph, out = run_op(lambda g, t, prog: popnn.global_avg_pool(g, t["x"], prog), {"x": x})
    want = x.astype(np.float64).mean(axis=(1, 2), keepdims=True)
    assert out["out"].shape == (3, 1, 1, 19)
    assert np.max(np.abs(out["out"] - want)) <= (1e-6 if dtype == np.float32 else 2e-3)
    assert len(op_contexts(graph, "popnn::globalAvgPool")) == 1


def _graph() -> Graph:
    return Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)


@pytest.mark.parametrize(
    ("shape", "kernel", "kwargs", "message"),
    [
        ([1, 5, 5], (2, 2), {}, r"'x' \(1, 5, 5\) must be a non-empty \[N, H, W, C\]"),
        ([1, 5, 5, 2], (0, 2), {}, "popnn::maxPool: kernel"),
        ([1, 5, 5, 2], (2, 2), {"stride": (1, 0)}, "popnn::maxPool: stride"),
        ([1, 5, 5, 2], (2, 2), {"padding": 2}, "must be smaller than the kernel"),
        ([1, 2, 2, 2], (3, 3), {}, "kernel \\(3, 3\\) is larger than 'x'"),
    ],
)
def test_bad_arguments_name_the_op(shape, kernel, kwargs, message) -> None:
    graph = _graph()
    x = graph.add_variable(FLOAT, shape, "x")
    with pytest.raises(ShapeError, match=message):
        popnn.max_pool(graph, x, kernel, Sequence(), **kwargs)


def test_integer_input_is_a_type_error() -> None:
    graph = _graph()
    x = graph.add_variable(INT, [1, 4, 4, 2], "ints")
    with pytest.raises(TypeMismatchError, match="popnn::avgPool: needs float or half, 'ints'"):
        popnn.avg_pool(graph, x, 2, Sequence())
