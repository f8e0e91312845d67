"""sorted_unique gives exactly numpy's unique values, for the shapes the analyses pass."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.model.unique import sorted_unique


@pytest.mark.parametrize("size", [0, 1, 2, 17, 100_000])
def test_sorted_unique_equals_numpy(size):
    values = np.random.default_rng(size).integers(-50, 50 + size // 10, size)
    result = sorted_unique(values)
    assert result.dtype == values.dtype
    assert result.tolist() == np.unique(values).tolist()


def test_sorted_unique_flattens_like_numpy():
    values = np.array([[3, 1], [3, 2]])
    assert sorted_unique(values).tolist() == [1, 2, 3]
