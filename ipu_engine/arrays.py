"""Array helpers the engine leans on for speed.

``unique`` sorts and drops repeats: numpy 2.x's ``np.unique`` takes a hashing path that
is tens of times slower than a sort for the large int64 key arrays of exchange planning.
"""

from __future__ import annotations

import numpy as np


def unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted."""
    flat = np.sort(np.asarray(values).reshape(-1))
    if flat.size == 0:
        return flat
    keep = np.empty(flat.size, dtype=bool)
    keep[0] = True
    np.not_equal(flat[1:], flat[:-1], out=keep[1:])
    return flat[keep]


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, sorted, and how often each occurs."""
    flat = np.sort(np.asarray(values).reshape(-1))
    if flat.size == 0:
        return flat, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    return flat[starts], np.diff(np.r_[starts, flat.size])
