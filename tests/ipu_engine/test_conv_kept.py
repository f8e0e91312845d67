"""A compute set's kept products joined (``codelets/conv_kept.py``): products of the same
patches whose weights, bias rows and outputs continue each other in memory become one
product computing the same columns; any gap, overlap or other layout keeps them apart."""

from __future__ import annotations

import numpy as np

from ipu_engine.codelets import conv_kept
from ipu_engine.codelets.conv_products import product, window_copies, windowed
from tests.ipu_engine.test_conv_groups import reference_conv

RNG = np.random.default_rng(43)


def _memory() -> tuple[np.ndarray, np.ndarray]:
    """One pool (as engine memory holds every float tensor) and patches [1, 1, 50, 13]."""
    pool = RNG.standard_normal(20_000).astype(np.float32)
    return pool, pool[:650].reshape(1, 1, 50, 13)


def _operands(pool, patches, column: int, width: int, bias: bool, gap: int = 0):
    """Weights [13, width] and outputs [50, width] at ``column`` of 64-wide rows in the
    pool (weights from 1000, outputs from 5000, bias rows from 900), ``gap`` columns on."""
    at = column + gap
    weights = pool[1000 + at : 1000 + at + 13 * 64].reshape(13, 64)[:, :width][None, None]
    out = pool[5000 + at : 5000 + at + 50 * 64].reshape(50, 64)[:, :width][None, None]
    b = pool[900 + at : 900 + at + width][None, None, None] if bias else None
    return patches, weights, b, out


def _want(pool, patches, width=64, bias=True) -> np.ndarray:
    w = pool[1000 : 1000 + 13 * 64].reshape(13, 64)[:, :width]
    want = patches[0, 0] @ w
    return want + pool[900 : 900 + width] if bias else want


def test_columns_that_continue_each_other_are_one_product() -> None:
    for bias in (True, False):
        pool, patches = _memory()
        want = _want(pool, patches, bias=bias)
        calls = [
            (product, _operands(pool, patches, 12, 52, bias)),
            (product, _operands(pool, patches, 0, 12, bias)),
        ]
        (joined,) = conv_kept._joined(calls, (pool, pool, pool, pool))
        assert joined[1][1].shape == (1, 1, 13, 64) and joined[1][3].shape == (1, 1, 50, 64)
        product(*joined[1])
        got = pool[5000 : 5000 + 50 * 64].reshape(50, 64)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_columns_apart_or_of_other_patches_stay_apart() -> None:
    pool, patches = _memory()
    first = _operands(pool, patches, 0, 12, True)
    apart = _operands(pool, patches, 12, 40, True, gap=1)  # one column between
    other = _operands(pool, pool[700:1350].reshape(1, 1, 50, 13), 12, 52, True)
    no_bias = _operands(pool, patches, 12, 52, False)
    for then in (apart, other, no_bias):
        calls = [(product, first), (product, then)]
        assert len(conv_kept._joined(calls, (pool, pool, pool, pool))) == 2


def _window(pool, images, column: int, width: int, made_weights: bool = False):
    """A windowed product of a padded 3x3 window of ``images`` (5 x 5, 13 channels: K =
    117), its weights [117, width] at ``column`` of 64-wide rows of the pool from 2000
    (or made by a weight copy), outputs [25, width] from 12000."""
    g = {
        "groups": 1, "inChans": 13, "outChans": width, "inRows": 5, "width": 5,
        "outRows": 5, "outWidth": 5, "kernelH": 3, "kernelW": 3, "strideH": 1,
        "strideW": 1, "dilationH": 1, "dilationW": 1, "padTop": 1, "padLeft": 1,
    }  # fmt: skip
    matrix, copies, blanks = window_copies(images, g, lambda s: np.full(s, np.nan, np.float32))
    weights = pool[2000 + column : 2000 + column + 117 * 64].reshape(117, 64)[:, :width]
    weights = weights[None, None]
    if made_weights:
        made = np.empty_like(weights)
        copies += ((made, weights),)
        weights = made
    out = pool[12000 + column : 12000 + column + 25 * 64].reshape(25, 64)[:, :width]
    return windowed, (copies, blanks, matrix, weights, None, out[None, None])


def test_windowed_products_of_the_same_window_copies_are_one_product() -> None:
    """Two output-channel blocks of one padded window make the same patches: joined,
    the window is copied once and one product computes both blocks' columns; made
    weights, or another window, keep them apart."""
    pool = RNG.standard_normal(20_000).astype(np.float32)
    images = pool[:325].reshape(1, 1, 1, 5, 5, 13)
    pools = (pool, pool, pool, pool)
    calls = [_window(pool, images, 12, 52), _window(pool, images, 0, 12)]
    (joined,) = conv_kept._joined(calls, pools)
    fn, args = joined
    assert fn is windowed and args[3].shape[-1] == 64 and args[5].shape[-1] == 64
    fn(*args)
    # numpy's convolution of the image (NHWC) by the 64 columns' weights as HWIO
    w = pool[2000 : 2000 + 117 * 64].reshape(3, 3, 13, 64)
    want = reference_conv(images[0, 0, 0][None], w, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    got = pool[12000 : 12000 + 25 * 64].reshape(1, 5, 5, 64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    made = [_window(pool, images, 12, 52, made_weights=True), _window(pool, images, 0, 12)]
    assert len(conv_kept._joined(made, pools)) == 2
    other = pool[400:725].reshape(1, 1, 1, 5, 5, 13)
    apart = [_window(pool, other, 12, 52), _window(pool, images, 0, 12)]
    assert len(conv_kept._joined(apart, pools)) == 2
