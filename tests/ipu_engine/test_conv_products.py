"""The convolution's products where the data is (``codelets/conv_products.py``): patches
of a 1x1 kernel as a view of the input (stride 1) or one strided copy (stride 2), weights
and outputs as matrices of memory, im2col without a padded copy -- each against numpy's
convolution, from NHWC and NCHW inputs, float and half, split input channels or not."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, poplin, poputil
from ipu_engine.codelets import conv_products
from ipu_engine.codelets.conv_products import patch_matrix
from ipu_engine.poplar.program import Copy
from tests.ipu_engine.op_harness import run_op
from tests.ipu_engine.test_conv_groups import close, reference_conv

RNG = np.random.default_rng(53)


@pytest.fixture
def products(monkeypatch) -> list[dict]:
    """Each product: whether its patches were memory itself and, when its outputs are a
    strided view of memory, whether the result went straight into it (None: gathered
    outputs, stored back by the engine)."""
    seen: list[dict] = []
    real_pixels, real_copies = conv_products._pixels, conv_products.window_copies
    real_view = conv_products._matrix_view

    def pixels(images, g):  # a 1x1 kernel's patches: memory itself when a float32 view
        p = real_pixels(images, g)
        if p is not None:
            in_memory = p.dtype == np.float32 and np.shares_memory(p, images)
            seen.append({"patches_in_memory": in_memory, "direct": None})
        return p

    def copies(images, g, make=None):  # patches made by window copies
        seen.append({"patches_in_memory": False, "direct": None})
        return real_copies(images, g, make)

    def view(target, shape):
        found = real_view(target, shape)
        seen[-1]["direct"] = found is not None
        return found

    monkeypatch.setattr(conv_products, "_pixels", pixels)
    monkeypatch.setattr(conv_products, "window_copies", copies)
    monkeypatch.setattr(conv_products, "_matrix_view", view)
    return seen


def _convolve(x_nhwc, w, bias, nchw, proportion, **kwargs) -> np.ndarray:
    inputs = {"x": x_nhwc.transpose(0, 3, 1, 2).copy() if nchw else x_nhwc, "w": w}
    if bias is not None:
        inputs["b"] = bias
    options = {"availableMemoryProportion": proportion}

    def build(graph, t, prog):
        image = t["x"].dim_shuffle([0, 2, 3, 1]) if nchw else t["x"]
        return poplin.convolution(
            graph, image, t["w"], prog, "y", bias=t.get("b"), options=options, **kwargs
        )

    _, out = run_op(build, inputs, 32)
    return out["out"]


POINTWISE = [
    # x shape (NHWC), w shape, stride, padding, groups
    ((1, 8, 8, 48), (1, 1, 48, 24), 1, 0, 1),
    ((2, 9, 7, 16), (1, 1, 16, 20), 2, 0, 1),  # odd sizes: the last row and column unread
    ((1, 6, 6, 12), (1, 1, 12, 10), 1, 1, 1),  # padded: a ring of bias-only outputs
    ((1, 8, 8, 24), (1, 1, 6, 12), 1, 0, 4),  # grouped
]


@pytest.mark.parametrize(("xs", "ws", "stride", "pad", "groups"), POINTWISE)
@pytest.mark.parametrize("nchw", [False, True])
@pytest.mark.parametrize("proportion", [0.6, 0.002])
def test_pointwise_convolutions_equal_numpy(
    products, xs, ws, stride, pad, groups, nchw, proportion
) -> None:
    x = RNG.standard_normal(xs).astype(np.float32)
    w = RNG.standard_normal(ws).astype(np.float32)
    b = RNG.standard_normal(ws[3]).astype(np.float32)
    got = _convolve(x, w, b, nchw, proportion, stride=stride, padding=pad, groups=groups)
    want = reference_conv(x, w, (stride, stride), ((pad, pad), (pad, pad)), (1, 1), groups, b)
    assert close(got, want, 1e-5)
    # every output that is a view of memory receives its product directly
    direct = [p["direct"] for p in products if p["direct"] is not None]
    assert all(direct)
    in_memory = any(p["patches_in_memory"] for p in products)
    # a 1x1 kernel at stride 1 without padding multiplies the input where it is
    assert in_memory == (stride == 1 and pad == 0)


@pytest.mark.parametrize("nchw", [False, True])
def test_split_input_channels_of_a_pointwise_convolution_go_memory_to_memory(
    products, nchw
) -> None:
    """Stacked input-channel blocks: patches, weights and partials all views of memory,
    one batched product with nothing gathered or scattered."""
    x = RNG.standard_normal((1, 8, 8, 64)).astype(np.float32)
    w = RNG.standard_normal((1, 1, 64, 32)).astype(np.float32)
    got = _convolve(x, w, None, nchw, 0.002)
    assert close(got, reference_conv(x, w, (1, 1), ((0, 0), (0, 0)), (1, 1), 1), 1e-5)
    assert any(p["direct"] and p["patches_in_memory"] for p in products)


@pytest.mark.parametrize("nchw", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_padded_dilated_kernels_equal_numpy(products, nchw, dtype) -> None:
    """im2col without a padded copy: kernel positions whose windows overhang the image
    on every side, one of them (dilation 3, padding 4) seeing padding only."""
    x = RNG.standard_normal((1, 7, 6, 10)).astype(dtype)
    w = RNG.standard_normal((3, 3, 10, 8)).astype(dtype)
    got = _convolve(x, w, None, nchw, 0.002, stride=(2, 1), padding=4, dilation=3)
    want = reference_conv(x, w, (2, 1), ((4, 4), (4, 4)), (3, 3), 1)
    assert close(got, want, 1e-5 if dtype == np.float32 else 2e-3)
    assert products and not any(p["patches_in_memory"] for p in products)


def _im2col(images: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """numpy's im2col of [D, U, G, H, W, C] images: pad, then take every window."""
    d, u, groups, h, w, c = images.shape
    (top, left), (kh, kw) = (g["padTop"], g["padLeft"]), (g["kernelH"], g["kernelW"])
    sh, sw, dh, dw = g["strideH"], g["strideW"], g["dilationH"], g["dilationW"]
    rows, cols = g["outRows"], g["outWidth"]
    big = np.zeros((d, u, groups, h + 2 * top + 20, w + 2 * left + 20, c), np.float64)
    big[:, :, :, top : top + h, left : left + w] = images
    out = np.zeros((d, groups, u, rows, cols, kh, kw, c))
    for i in range(rows):
        for j in range(cols):
            for a in range(kh):
                for b in range(kw):
                    out[:, :, :, i, j, a, b] = big[
                        :, :, :, i * sh + a * dh, j * sw + b * dw
                    ].transpose(0, 2, 1, 3)
    return out.reshape(d, groups, u * rows * cols, kh * kw * c)


@pytest.mark.parametrize(
    ("kernel", "stride", "dilation", "pads"),
    [((1, 1), (1, 1), (1, 1), (0, 0)), ((1, 1), (2, 3), (1, 1), (0, 0)),
     ((3, 2), (1, 2), (2, 1), (1, 0)), ((2, 3), (3, 1), (1, 3), (5, 2)),
     ((1, 1), (1, 1), (1, 1), (2, 1))],
)  # fmt: skip
@pytest.mark.parametrize("nchw", [False, True])
def test_patch_matrix_equals_a_padded_im2col(kernel, stride, dilation, pads, nchw) -> None:
    """From channels-inner images (NHWC) and pixels-inner ones (NCHW, then patches made
    [taps, C, pixels] and seen transposed)."""
    images = RNG.standard_normal((2, 3, 2, 5, 6, 4)).astype(np.float32)
    if nchw:  # the same values, channels outer in memory
        images = images.transpose(0, 1, 2, 5, 3, 4).copy().transpose(0, 1, 2, 4, 5, 3)
    (kh, kw), (sh, sw), (dh, dw), (top, left) = kernel, stride, dilation, pads
    rows = (5 + 2 * top - dh * (kh - 1) - 1) // sh + 1
    cols = (6 + 2 * left - dw * (kw - 1) - 1) // sw + 1
    g = {"outRows": rows, "outWidth": cols, "inRows": 5, "width": 6, "kernelH": kh,
         "kernelW": kw, "strideH": sh, "strideW": sw, "dilationH": dh, "dilationW": dw,
         "padTop": top, "padLeft": left, "groups": 2, "inChans": 4}  # fmt: skip
    got = patch_matrix(images, g)
    np.testing.assert_array_equal(got, _im2col(images, g))


def test_weights_written_again_between_runs_are_the_ones_multiplied(products) -> None:
    """The 1x1 product reads its weights from memory each run (nothing kept from the run
    before): new weights from the host (write_tensor), from a stream, or copied on the
    device by the program give numpy's convolution with those weights."""
    device = IPUModel("ipu2", tiles_per_ipu=16).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [1, 48, 6, 6], "x")  # NCHW, seen as NHWC
    w = graph.add_variable(FLOAT, [1, 1, 48, 16], "w")
    spare = graph.add_variable(FLOAT, [1, 1, 48, 16], "spare")
    for t in (x, w, spare):
        poputil.map_tensor_linearly(graph, t)
    for name, t in (("x", x), ("w", w), ("spare", spare)):
        graph.create_host_write(name, t)
    convolve = Sequence()
    options = {"availableMemoryProportion": 0.002}  # split input channels: stacked views
    y = poplin.convolution(graph, x.dim_shuffle([0, 2, 3, 1]), w, convolve, "y", options=options)
    graph.create_host_read("y", y)
    stream = graph.add_host_to_device_fifo("weights", FLOAT, 48 * 16)
    programs = [convolve, Sequence(Copy(stream, w), convolve), Sequence(Copy(spare, w), convolve)]
    engine = Engine(graph, programs)
    engine.load(device)
    image = RNG.standard_normal((1, 6, 6, 48)).astype(np.float32)
    engine.write_tensor("x", image.transpose(0, 3, 1, 2).copy())
    kernels = [RNG.standard_normal((1, 1, 48, 16)).astype(np.float32) for _ in range(4)]

    def check(kernel: np.ndarray) -> None:
        want = reference_conv(image, kernel, (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
        assert close(engine.read_tensor("y"), want, 1e-5)

    engine.write_tensor("w", kernels[0])
    engine.run(0)
    check(kernels[0])
    engine.write_tensor("w", kernels[1])  # the host writes new weights
    engine.run(0)
    check(kernels[1])
    engine.connect_stream("weights", kernels[2].reshape(-1))  # a stream brings them
    engine.run(1)
    check(kernels[2])
    engine.write_tensor("spare", kernels[3])  # the program copies them on the device
    engine.run(2)
    check(kernels[3])
    assert any(p["direct"] and p["patches_in_memory"] for p in products)
