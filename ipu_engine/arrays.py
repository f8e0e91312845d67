"""Array helpers the engine leans on for speed.

``unique`` sorts and drops repeats: numpy 2.x's ``np.unique`` takes a hashing path that
is tens of times slower than a sort for the large int64 key arrays of exchange planning.
It is profiler_core's (the engine writes its reports with profiler_core, so may use it).
"""

from __future__ import annotations

import numpy as np

from profiler_core.model.unique import sorted_unique as unique

__all__ = ["unique", "unique_counts"]


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, sorted, and how often each occurs."""
    flat = np.sort(np.asarray(values).reshape(-1))
    if flat.size == 0:
        return flat, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    return flat[starts], np.diff(np.r_[starts, flat.size])
