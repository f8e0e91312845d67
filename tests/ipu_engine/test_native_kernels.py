"""The native kernels (``codelets/_kernels``: depthwise sums, partials; ``poplar/_strided``:
the strided copy) against numpy references computed here, element by element in the
vertices' order of float32 operations: equal to the bit, on random shapes and layouts
(lead dimensions, strides, dilations, padding, NHWC outputs, strided and reversed views),
and a wrong call is a Python error. The engine-level tests that run them are
``test_conv_batched_exact.py`` (depthwise), ``test_reduce_partials.py`` (partials) and
``test_flat_views.py`` (element-wise operands copied into rows)."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine.codelets import kernels
from ipu_engine.poplar import strided

SEEDS = range(12)


def depthwise_reference(x, w, bias, top, left, sh, sw, dh, dw, rows, cols) -> np.ndarray:
    """[*lead, G, F, rows, cols]: 0 + each window's products, kernel row by row, column by
    column, each product rounded to float32 then added; the bias added last."""
    kh, kw = w.shape[-4], w.shape[-3]
    need_h, need_w = (rows - 1) * sh + (kh - 1) * dh + 1, (cols - 1) * sw + (kw - 1) * dw + 1
    h, width = x.shape[-3], x.shape[-2]
    lead = x.shape[:-3]
    padded = np.zeros((*lead, max(need_h, top + h), max(need_w, left + width), x.shape[-1]))
    padded = padded.astype(np.float32)
    padded[..., top : top + h, left : left + width, :] = x
    acc = np.zeros((*lead, rows, cols, w.shape[-2], w.shape[-1]), np.float32)
    for a in range(kh):
        for b in range(kw):
            window = padded[..., a * dh :, b * dw :, :][..., : (rows - 1) * sh + 1 : sh, :, :]
            window = window[..., : (cols - 1) * sw + 1 : sw, :]  # [*lead, rows, cols, G]
            with np.errstate(invalid="ignore"):  # 0 * inf in the padding
                product = window[..., None] * w[..., a, b, None, None, :, :]
            acc = acc + product
    if bias is not None:
        acc = acc + bias[..., None, None, :, :]
    return np.moveaxis(acc, (-2, -1), (-4, -3))


def _depthwise_case(seed: int) -> dict:
    rng = np.random.default_rng(3900 + seed)
    lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    groups, outs = int(rng.integers(1, 20)), int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw, dh, dw = (int(v) for v in rng.integers(1, 3, size=4))
    h, width = int(rng.integers(kh * dh, 24)), int(rng.integers(kw * dw, 40))
    top, left = int(rng.integers(0, 3)), int(rng.integers(0, 3))
    rows = int(rng.integers(1, (top + h - (kh - 1) * dh - 1) // sh + 2))
    cols = int(rng.integers(1, (left + width + 2 - (kw - 1) * dw - 1) // sw + 2))
    x = rng.standard_normal((*lead, h, width, groups)).astype(np.float32)
    if rng.integers(0, 2):  # channel-major memory (an NCHW input) seen as [H, W, G]
        x = np.ascontiguousarray(np.moveaxis(x, -1, -3)).swapaxes(-3, -2).swapaxes(-2, -1)
    return {
        "x": x,
        "w": rng.standard_normal((*lead, kh, kw, groups, outs)).astype(np.float32),
        "bias": rng.standard_normal((*lead, groups, outs)).astype(np.float32)
        if rng.integers(0, 2)
        else None,
        "geometry": (top, left, sh, sw, dh, dw),
        "out": (*lead, groups, outs, rows, cols),
        "nhwc_out": bool(rng.integers(0, 2)),
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_depthwise_sums_equal_the_vertex_order_to_the_bit(seed) -> None:
    case = _depthwise_case(seed)
    *lead, groups, outs, rows, cols = case["out"]
    want = depthwise_reference(case["x"], case["w"], case["bias"], *case["geometry"], rows, cols)
    if case["nhwc_out"]:  # the output's channels innermost in memory, as an NHWC activation
        memory = np.full((*lead, rows, cols, groups, outs), np.nan, np.float32)
        out = np.moveaxis(memory, (-2, -1), (-4, -3))
    else:
        out = np.full(case["out"], np.nan, np.float32)
    kernels.depthwise(case["x"], case["w"], case["bias"], out, *case["geometry"])
    np.testing.assert_array_equal(out, want)
    assert np.array_equal(np.signbit(out), np.signbit(want))


def test_a_depthwise_layer_of_mobilenet_size_and_its_padding_products() -> None:
    """64 channels of 56 x 56 (every output row a vector run and a tail), written in
    channel-major rows and as NHWC (16 channels' pixels transposed in registers), weights
    with an infinity: a padded window's product is 0 * inf = NaN, as the vertex's."""
    rng = np.random.default_rng(39)
    x = rng.standard_normal((64, 58, 56, 1)).astype(np.float32)
    w = rng.standard_normal((64, 3, 3, 1, 1)).astype(np.float32)
    w[5, 0, 0] = np.inf
    bias = rng.standard_normal((64, 1, 1)).astype(np.float32)
    want = depthwise_reference(x, w, bias, 1, 1, 1, 1, 1, 1, 58, 56)
    nhwc = np.empty((58, 56, 64), np.float32)  # the engine's: channels innermost
    for out in (np.empty((64, 1, 1, 58, 56), np.float32), nhwc.transpose(2, 0, 1)[:, None, None]):
        kernels.depthwise(x, w, bias, out, 1, 1, 1, 1, 1, 1)
        np.testing.assert_array_equal(out, want)
        assert np.isnan(out[5, 0, 0, 0]).all() and not np.isnan(out[5, 0, 0, 1:, 1:]).any()


def test_partials_are_summed_in_order_to_the_bit() -> None:
    rng = np.random.default_rng(7)
    for depth, size in ((1, 5), (2, 1000), (5, 3137), (9, 64), (3, 200_000)):
        pool = rng.standard_normal(depth * size + 11).astype(np.float32)
        pool[::7] = -0.0
        pool[3] = np.nan
        partials = pool[11:].reshape(depth, size)
        out = np.empty(size, np.float32)
        kernels.sum_partials(partials, out)
        want = partials[0].copy()
        for p in range(1, depth):
            want = want + partials[p]
        np.testing.assert_array_equal(out, want)
        assert np.array_equal(np.signbit(out), np.signbit(want))
        every_other = np.empty(2 * size, np.float32)[::2]  # strided, element by element
        kernels.sum_partials(partials[:, ::-1], every_other)
        np.testing.assert_array_equal(every_other, want[::-1])


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.int8, np.bool_, np.int64, np.complex128]
)
def test_a_strided_copy_equals_numpys_assignment(dtype) -> None:
    rng = np.random.default_rng(5)
    for shape in ((64, 3136), (17, 33), (16, 16), (3, 5, 7), (1, 40), (2, 3, 4, 5)):
        src = (rng.standard_normal(shape) * 50).astype(dtype)
        for order in (None, tuple(reversed(range(len(shape))))):
            source = src if order is None else np.ascontiguousarray(src.T).T  # other order
            dst = np.zeros(shape, dtype)
            strided.copy(dst, source)
            np.testing.assert_array_equal(dst, src)
            flipped = np.zeros(shape, dtype)[..., ::-1]  # a reversed destination
            strided.copy(flipped, source)
            np.testing.assert_array_equal(flipped, src)


def test_a_transpose_copies_every_tile_and_edge() -> None:
    """Sizes around the 16 x 16 tiles transposed in registers, and views inside bigger
    memory (an NCHW view of NHWC memory, written into rows of a wider array)."""
    rng = np.random.default_rng(6)
    for rows, cols in ((16, 16), (15, 17), (33, 48), (128, 49), (2048, 49)):
        nhwc = rng.standard_normal((cols, rows + 3)).astype(np.float32)
        view = nhwc[:, 1 : rows + 1].T  # [rows, cols] by steps [1, rows + 3]
        memory = np.zeros((rows, cols + 5), np.float32)
        strided.copy(memory[:, 2 : cols + 2], view)
        np.testing.assert_array_equal(memory[:, 2 : cols + 2], view)
        assert not memory[:, :2].any() and not memory[:, cols + 2 :].any()


def test_rows_contiguous_in_both_are_copied_row_by_row_between_their_edges() -> None:
    """Rows inside wider memory on both sides (a tile's rows of a tensor), copied a row at
    a time: every row lands, nothing beside the rows is touched."""
    rng = np.random.default_rng(7)
    for rows, cols, lead in ((1, 200_704, 1), (64, 3136, 1), (5, 3, 2), (3, 17, 4)):
        source = rng.standard_normal((lead, rows, cols + 7)).astype(np.float32)
        memory = np.zeros((lead, rows, cols + 5), np.float32)
        strided.copy(memory[:, :, 2 : cols + 2], source[:, :, 3 : cols + 3])
        np.testing.assert_array_equal(memory[:, :, 2 : cols + 2], source[:, :, 3 : cols + 3])
        assert not memory[..., :2].any() and not memory[..., cols + 2 :].any()


def test_wrong_calls_are_python_errors() -> None:
    x = np.zeros((4, 4, 1), np.float32)
    w = np.zeros((3, 3, 1, 1), np.float32)
    out = np.zeros((1, 1, 2, 2), np.float32)
    with pytest.raises(TypeError, match="'f'"):
        kernels.depthwise(x.astype(np.float64), w, None, out, 0, 0, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="dimension"):
        kernels.depthwise(x, w, None, np.zeros((1, 2, 2, 2), np.float32), 0, 0, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="strides"):
        kernels.depthwise(x, w, None, out, 0, 0, 0, 1, 1, 1)
    read_only = out.copy()
    read_only.flags.writeable = False
    with pytest.raises(TypeError, match="writable"):
        kernels.depthwise(x, w, None, read_only, 0, 0, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="at least one partial"):
        kernels.sum_partials(np.zeros((0, 3), np.float32), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="dimension"):
        kernels.sum_partials(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="different types"):
        strided.copy(np.zeros(3, np.float32), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="dimension"):
        strided.copy(np.zeros(3, np.float32), np.zeros(4, np.float32))


SPECIALS = np.concatenate(
    [
        np.array([-0.0, 0.0, np.nan, -np.nan, -1, 1, -np.inf, np.inf, 6, 1e-42, -1e-42]),
        np.array([0x7FC00001, 0xFFC00123], np.uint32).view(np.float32),  # NaN payloads
    ]
).astype(np.float32)


@pytest.mark.parametrize("maximum", [True, False])
def test_a_bound_by_one_value_is_numpys_bit_for_bit(maximum) -> None:
    """ReLU's and a Clip's maximum and minimum: NaNs kept with their payloads, -0.0 and
    0.0 as numpy orders them, every layout (contiguous, strided, in place, 0-d, 3-d)."""
    fn = np.maximum if maximum else np.minimum
    rng = np.random.default_rng(8)
    values = np.concatenate([SPECIALS, rng.standard_normal(1000).astype(np.float32) * 8])
    for c in (0.0, -0.0, 6.0, -1.0, np.inf, np.nan):
        c = np.float32(c)
        for x in (values, values[::3], values[:999].reshape(9, 111)[:, ::-2], values[5]):
            want = fn(x, c)
            out = np.empty_like(want)
            kernels.bound(np.asarray(x), out, c, maximum)
            assert np.array_equal(out.view(np.uint32), want.view(np.uint32))
        in_place = values.copy()
        kernels.bound(in_place, in_place, c, maximum)
        assert np.array_equal(in_place.view(np.uint32), fn(values, c).view(np.uint32))
        for rows, cols in ((64, 3136), (17, 33), (16, 16), (3, 40)):  # NCHW views of NHWC
            nhwc = rng.choice(values, size=(cols, rows))
            out = np.empty((rows, cols), np.float32)
            kernels.bound(nhwc.T, out, c, maximum)  # 16 x 16 tiles through registers
            assert np.array_equal(out.view(np.uint32), fn(nhwc.T, c).view(np.uint32))


def test_a_bias_added_to_strided_rows_is_numpys_sum() -> None:
    """A grid product's output-channel block (52 of every 64 elements of a pixel) plus
    its bias broadcast over the pixels; and other layouts: the same as ``out += other``."""
    rng = np.random.default_rng(9)
    memory = rng.standard_normal((3136, 64)).astype(np.float32)
    bias = rng.standard_normal(52).astype(np.float32)
    want = memory.copy()
    want[:, 6:58] += bias
    kernels.add_into(memory[:, 6:58], np.broadcast_to(bias, (3136, 52)))
    np.testing.assert_array_equal(memory, want)
    for shape in ((5, 7, 33), (1,), (40, 3)):
        out = rng.standard_normal(shape).astype(np.float32)
        other = np.ascontiguousarray(rng.standard_normal(shape[::-1]).astype(np.float32).T)
        want = out + other.T.T
        view = np.asfortranarray(out)  # an output walked against its memory order
        kernels.add_into(view, other)
        np.testing.assert_array_equal(view, want)


def test_a_grid_of_more_axes_than_the_kernel_takes_is_walked_outside_it() -> None:
    """``conv_grouped._depthwise`` with 9 grid axes (the kernel takes 8): its outer axis is
    walked in Python, each call the kernel's; the same sums as the reference."""
    from ipu_engine.codelets import conv_grouped

    rng = np.random.default_rng(10)
    grid = (2,) + (1,) * 7 + (3,)
    g = {"outRows": 4, "outWidth": 5, "inRows": 6, "width": 7, "groups": 2, "outChans": 1,
         "kernelH": 3, "kernelW": 3, "strideH": 1, "strideW": 1, "dilationH": 1,
         "dilationW": 1, "padTop": 0, "padLeft": 0, "inChans": 1}  # fmt: skip
    x = rng.standard_normal((*grid, 6, 7, 2, 1)).astype(np.float32)
    w = rng.standard_normal((*grid, 3, 3, 1, 2, 1)).astype(np.float32)
    bias = rng.standard_normal((*grid, 2, 1)).astype(np.float32)
    dest = np.empty((*grid, 2, 1, 4, 5), np.float32)
    assert conv_grouped._depthwise(x, w, bias, g, dest) is None  # walked: not one call
    want = depthwise_reference(x[..., 0], w[..., 0, :, :], bias, 0, 0, 1, 1, 1, 1, 4, 5)
    np.testing.assert_array_equal(dest, want)
