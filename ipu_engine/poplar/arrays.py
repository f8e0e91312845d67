"""Array helpers the engine leans on for speed.

``unique`` sorts and drops repeats: numpy 2.x's ``np.unique`` takes a hashing path that
is tens of times slower than a sort for the large int64 key arrays of exchange planning.
It is profiler_core's (the engine writes its reports with profiler_core, so may use it).
"""

from __future__ import annotations

import numpy as np

from profiler_core.model.unique import sorted_unique as unique

__all__ = ["memory_view", "search_many", "strided_pattern", "unique", "unique_counts"]


def unique_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, sorted, and how often each occurs."""
    flat = np.sort(np.asarray(values).reshape(-1))
    if flat.size == 0:
        return flat, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, flat[1:] != flat[:-1]])
    return flat[starts], np.diff(np.r_[starts, flat.size])


def search_many(haystack: np.ndarray, needles: np.ndarray, side: str = "right") -> np.ndarray:
    """``np.searchsorted(haystack, needles, side)`` for many needles: searched in sorted
    order when they are not in it -- a binary search per needle in random order misses the
    cache at every step of a large haystack (ResNet-50's 10M tile intervals: 10x slower),
    in order each search starts where the last one ended. The same indices."""
    needles = np.asarray(needles)
    if needles.size < 4096 or haystack.size < 65536 or bool(np.all(needles[1:] >= needles[:-1])):
        return np.searchsorted(haystack, needles, side=side)
    flat = needles.reshape(-1)
    order = np.argsort(flat, kind="stable")
    found = np.empty(flat.size, dtype=np.intp)
    found[order] = np.searchsorted(haystack, flat[order], side=side)
    return found.reshape(needles.shape)


def memory_view(
    pool: np.ndarray, first: int, shape: tuple[int, ...], steps: tuple[int, ...]
) -> np.ndarray:
    """A writable view of the 1-D contiguous ``pool``: the element at index (i, j, ...) is
    ``pool[first + i * steps[0] + j * steps[1] + ...]`` (steps in elements, none
    negative). Made by the ndarray constructor over ``pool``'s buffer, which refuses a
    view reaching outside it (as_strided does not check, and costs ~10 us a view where
    a codelet's run makes dozens; this ~0.5 us)."""
    item = pool.itemsize
    if first < 0 or first > pool.size:
        raise IndexError(f"view at {first} outside memory of {pool.size}")
    try:
        return np.ndarray(shape, pool.dtype, pool, first * item, [s * item for s in steps])
    except (TypeError, ValueError) as exc:  # past the end of the buffer
        where = f"view at {first}, {shape} by {steps}"
        raise IndexError(f"{where}: outside memory of {pool.size}") from exc


def strided_pattern(addr: np.ndarray) -> tuple[int, list[int], list[int]] | None:
    """(first, sizes, steps) from the innermost dimension out, when ``addr`` is
    ``first + sum(i_k * steps[k])`` over a row-major index of those sizes, steps >= 0."""
    if addr.size == 0:
        return None
    sizes: list[int] = []
    steps: list[int] = []
    cur = addr.astype(np.int64, copy=False)
    while cur.size > 1:
        step = int(cur[1] - cur[0])
        breaks = np.flatnonzero(np.diff(cur) != step)
        n = int(breaks[0]) + 1 if breaks.size else cur.size
        if step < 0 or cur.size % n:
            return None
        rows = cur.reshape(-1, n)
        if not np.array_equal(rows, rows[:, :1] + np.arange(n, dtype=np.int64) * step):
            return None
        sizes.append(n)
        steps.append(step)
        cur = rows[:, 0]
    return int(cur[0]), sizes, steps
