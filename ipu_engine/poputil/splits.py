"""The split counts a PopLibs planner tries when it cuts a dimension over tiles: matmuls,
convolutions, pooling and gathers all choose among them."""

from __future__ import annotations

import numpy as np


def split_counts(size: int, limit: int) -> np.ndarray:
    """Every split count of ``size`` (at most ``limit``) that gives a distinct block size."""
    counts = np.arange(1, min(size, limit) + 1)
    blocks = -(-size // counts)
    _, first = np.unique(blocks, return_index=True)
    return counts[first]
