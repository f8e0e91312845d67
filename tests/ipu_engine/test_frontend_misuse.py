"""Misuses of the traced front end (issue 30, point 4, probed beyond the issue's list): an
axis of 0.5, "0" or True, a float reshape, a float slice bound, keepdims="yes", 2**40 added
to an int tensor. Each was a raw Python error or silently bent (True summed axis 1, 1 + 2**40
wrapped to 1 in an int32); now a ShapeError or TypeMismatchError naming the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import ShapeError, TypeMismatchError, ops
from ipu_engine.frontend.array_ops import concatenate

SMALL = {"tiles_per_ipu": 4}
X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        (lambda x: x.sum(axis=0.5), "sum of float[3,4]: the axis must be an integer, got 0.5"),
        (lambda x: x.sum(axis="0"), "sum of float[3,4]: the axis must be an integer, got '0'"),
        (lambda x: x.sum(axis=True), "the axis must be an integer, got the boolean True"),
        (lambda x: x.max(axis=[0, 1.0]), "max of float[3,4]: the axis must be an integer"),
        (lambda x: ops.softmax(x, axis=0.5), "softmax of float[3,4]: the axis must be an int"),
        (lambda x: x.sum(axis=0, keepdims="yes"), "sum: keepdims must be True or False"),
        (lambda x: x.reshape(2.0, 6), "reshape of float[3,4]: the shape must be an integer"),
        (lambda x: x.reshape("12"), "the shape must be an integer, got '12' (str)"),
        (lambda x: x.transpose(0.5, 1), "transpose of float[3,4]: the axes must be an integer"),
        (lambda x: x.transpose(3, 0), "the axes (3, 0) are not all within the 2 axes"),
        (lambda x: x[1:2.5], "the slice stop must be an integer, got 2.5"),
        (lambda x: x[True], "index True of float[3,4]: only integers, slices, None"),
        (lambda x: concatenate([x, x], 0.5), "concatenate: the axis must be an integer"),
    ],
)
def test_axes_shapes_and_indices_that_are_not_integers_name_the_line(fn, said):
    with pytest.raises(ShapeError) as e:
        ie.compile(fn, [X], **SMALL)
    assert str(e.value).startswith(f"test_frontend_misuse.py:{fn.__code__.co_firstlineno}: ")
    assert said in str(e.value)


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        (lambda k: k + 2**40, "the constant 1099511627776: 1099511627776 is outside the range"),
        (lambda k: k * 2**70, "integers beyond 64 bits"),
        (lambda k: k.astype(3), "3 is not an element type"),
    ],
)
def test_int_constants_that_would_wrap_and_unknown_types_are_refused(fn, said):
    with pytest.raises(TypeMismatchError) as e:
        ie.compile(fn, [np.array([1, 2, 3], np.int32)], **SMALL)
    assert said in str(e.value)


def test_well_formed_axes_still_give_numpy_s_results():
    total = ie.compile(lambda x: x.sum(axis=np.int64(1)), [X], **SMALL)
    np.testing.assert_array_equal(total, X.sum(axis=1))
    kept = ie.compile(lambda x: x.max(axis=(0,), keepdims=True), [X], **SMALL)
    np.testing.assert_array_equal(kept, X.max(axis=0, keepdims=True))
    moved = ie.compile(lambda x: x.transpose(-1, 0) + 0.0, [X], **SMALL)
    np.testing.assert_array_equal(moved, X.T)
    k = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(ie.compile(lambda v: v + 2**30, [k], **SMALL), k + 2**30)
