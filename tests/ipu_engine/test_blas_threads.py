"""The codelets' products run with numpy's BLAS on one thread, and the user's setting is
put back afterwards (``codelets/blas_threads.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine.codelets import blas_threads
from ipu_engine.codelets.blas_threads import one_blas_thread


def test_one_blas_thread_inside_and_the_count_restored_after() -> None:
    found = blas_threads._openblas()
    if found is None:
        pytest.fail("numpy's OpenBLAS was not found among the loaded libraries")
    get, put = found
    before = int(get())
    put(2)
    try:
        with one_blas_thread():
            assert int(get()) == 1
            a = np.arange(12.0).reshape(3, 4)
            np.testing.assert_array_equal(a @ a.T, np.einsum("ik,jk->ij", a, a))
        assert int(get()) == 2
    finally:
        put(before)


def test_the_count_is_restored_when_the_block_raises() -> None:
    get, put = blas_threads._openblas()
    before = int(get())
    put(2)
    try:
        with pytest.raises(ValueError), one_blas_thread():
            raise ValueError("codelet failed")
        assert int(get()) == 2
    finally:
        put(before)
