"""poplin's ``partialsType`` for half convolutions: products accumulated in float32 (the
default, as Poplar) or in half, partials kept in that type; against numpy loops."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import HALF, Graph, GraphError, IPUModel, Sequence, poplin, poputil
from tests.ipu_engine.conftest import run_program

RNG = np.random.default_rng(262)
SHAPE, KERNEL = (1, 6, 5, 16), (3, 3, 16, 4)  # NHWC input, [KH, KW, C, F] weights


def conv_terms(x: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
    """The products of a "same" stride-1 convolution, one [N, H, W, F] array per (a, b, c)
    in the order a vertex walks its patch: kernel row, kernel column, input channel."""
    kh, kw, c, _ = w.shape
    xp = np.pad(x.astype(np.float32), ((0, 0), (kh // 2,) * 2, (kw // 2,) * 2, (0, 0)))
    h, wd = x.shape[1:3]
    return [
        xp[:, a : a + h, b : b + wd, ch, None] * w[a, b, ch].astype(np.float32)
        for a in range(kh)
        for b in range(kw)
        for ch in range(c)
    ]


def run_half_conv(options: dict, tiles: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, Graph]:
    device = IPUModel("ipu2", tiles_per_ipu=tiles).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(HALF, list(SHAPE), "x")
    w = graph.add_variable(HALF, list(KERNEL), "w")
    for name, t in (("x", x), ("w", w)):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
    prog = Sequence()
    y = poplin.convolution(graph, x, w, prog, "y", options=options)
    graph.create_host_read("y", y)
    # [0, 4) values: sums of 144 products near 500, where half's spacing is 0.25-0.5
    xv = RNG.uniform(0, 4, SHAPE).astype(np.float16)
    wv = RNG.uniform(0, 1, KERNEL).astype(np.float16)
    _, out = run_program(graph, device, prog, {"x": xv, "w": wv}, reads=["y"])
    return out["y"], xv, wv, graph


def test_half_convolution_accumulates_in_float_by_default():
    out, x, w, _ = run_half_conv({}, tiles=1)
    assert out.dtype == np.float16
    exact = np.sum(np.stack([t.astype(np.float64) for t in conv_terms(x, w)]), axis=0)
    np.testing.assert_array_equal(out, exact.astype(np.float16))


def test_half_convolution_with_half_partials_rounds_every_step():
    out, x, w, _ = run_half_conv({"partialsType": "half"}, tiles=1)
    acc = np.zeros(out.shape, np.float16)
    for term in conv_terms(x, w):
        acc = (acc.astype(np.float32) + term).astype(np.float16)
    np.testing.assert_array_equal(out, acc)
    exact = np.sum(np.stack([t.astype(np.float64) for t in conv_terms(x, w)]), axis=0)
    assert np.any(acc != exact.astype(np.float16))  # the precisions do differ here


@pytest.mark.parametrize(("partials", "size"), [("float", 4), ("half", 2)])
def test_split_input_channels_keep_partials_in_the_partials_type(partials, size):
    options = {"partialsType": partials, "availableMemoryProportion": 0.001}
    out, x, w, graph = run_half_conv(options, tiles=32)
    (variable,) = [v for v in graph.variables if v.name.endswith("partials")]
    assert variable.type.size == size and variable.shape[0] > 1  # input channels were split
    exact = np.sum(np.stack([t.astype(np.float64) for t in conv_terms(x, w)]), axis=0)
    np.testing.assert_allclose(out, exact, rtol=4e-3)


def test_an_unknown_partials_type_is_named():
    with pytest.raises(GraphError, match="partialsType must be 'float' or 'half', got 'double'"):
        run_half_conv({"partialsType": "double"}, tiles=1)
