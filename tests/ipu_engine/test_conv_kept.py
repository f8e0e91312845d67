"""A compute set's kept products joined (``codelets/conv_kept.py``): products of the same
patches whose weights, bias rows and outputs continue each other in memory become one
product computing the same columns; any gap, overlap or other layout keeps them apart."""

from __future__ import annotations

import numpy as np

from ipu_engine.codelets import conv_kept
from ipu_engine.codelets.conv_products import product

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
