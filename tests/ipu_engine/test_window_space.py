"""The space kept convolution products make their matrices in (``window_space``): apart
within a compute set, shared between compute sets of one engine memory, per memory."""

from __future__ import annotations

import numpy as np

from ipu_engine.codelets.window_space import take


class _Batch:  # what ``take`` uses of a VertexBatch: the compute set's own cache
    def __init__(self) -> None:
        self.cache: dict = {}


def _base(a: np.ndarray) -> np.ndarray:
    return a.base if a.base is not None else a


def test_a_compute_sets_matrices_are_apart_and_compute_sets_share_the_space() -> None:
    memory = np.zeros(10, np.float32)
    first, second = _Batch(), _Batch()
    a = take(first, memory, (4, 5))
    b = take(first, memory, (3,))  # past the first space's end: a larger one
    assert not np.shares_memory(a, b)
    c = take(second, memory, (2, 10))  # the next compute set: from the larger one's start
    assert np.shares_memory(c, b) and _base(c) is _base(b)
    d = take(second, memory, (5,))
    assert not np.shares_memory(c, d) and _base(d) is _base(b)
    other = take(_Batch(), np.zeros(10, np.float32), (4, 5))  # another engine's memory
    assert not np.shares_memory(other, a)


def test_a_compute_set_needing_more_starts_a_larger_space_and_the_old_one_stays() -> None:
    memory = np.zeros(10, np.float32)
    first, second = _Batch(), _Batch()
    a = take(first, memory, (20,))
    a[...] = 1.0
    big = take(second, memory, (50,))  # more than the space: a larger one
    assert not np.shares_memory(big, a) and big.size == 50
    big[...] = 2.0
    np.testing.assert_array_equal(a, 1.0)  # the first compute set's matrix is its own
    more = take(first, memory, (30,))  # its next matrix: apart from its first one
    assert not np.shares_memory(more, a)
    assert take(_Batch(), memory, (10,)).base is big.base  # later ones share the larger
