"""Aggregating per-tile values to the pixel columns of a chart.

A chart of 23,552 tiles on 1,500 pixels shows, for each pixel column, the tile with the
largest total in that column, so a hot tile is never averaged away. When there are fewer
tiles than pixels, each column shows the tile under its centre (bars several pixels wide).
"""

from __future__ import annotations

import numpy as np


def column_ranges(n: int, x0: float, x1: float, width: int) -> tuple[np.ndarray, np.ndarray]:
    """For ``width`` pixel columns spanning positions [x0, x1): the positions [lo, hi) each
    column covers, clipped to [0, n) (empty where a column falls outside the data).

    Position ``i`` covers [i - 0.5, i + 0.5). When a column is narrower than a position it
    covers the one under its centre.
    """
    width = max(int(width), 1)
    if x1 <= x0:
        x1 = x0 + 1e-9
    edges = x0 + (x1 - x0) * np.arange(width + 1) / width + 0.5
    if (x1 - x0) / width <= 1.0:
        lo = np.floor((edges[:-1] + edges[1:]) / 2).astype(np.int64)
        hi = lo + 1
    else:
        lo = np.ceil(edges[:-1] - 1e-9).astype(np.int64)
        hi = np.ceil(edges[1:] - 1e-9).astype(np.int64)
    lo, hi = np.clip(lo, 0, n), np.clip(hi, 0, n)
    return lo, np.maximum(hi, lo)


def column_tiles(totals: np.ndarray, x0: float, x1: float, width: int) -> np.ndarray:
    """For ``width`` pixel columns spanning positions [x0, x1), the position shown in each:
    the one with the largest total among those the column covers, -1 where there is none.
    """
    lo, hi = column_ranges(totals.shape[0], x0, x1, width)
    return _argmax_in_ranges(totals, lo, hi)


def _argmax_in_ranges(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Index of the largest value in each [lo, hi) (first on ties); -1 for empty ranges.

    Non-empty ranges are consecutive: each starts where the previous ends, or repeats it
    (zoomed in, several columns show one position).
    """
    result = np.full(lo.shape[0], -1, dtype=np.int64)
    nonempty = hi > lo
    if not nonempty.any():
        return result
    lo_ne, hi_ne = lo[nonempty], hi[nonempty]
    if np.all(hi_ne - lo_ne == 1):
        result[nonempty] = lo_ne
        return result
    # Consecutive ranges: one reduceat over their starts finds every maximum at once.
    segment = values[lo_ne[0] : hi_ne[-1]]
    starts = lo_ne - lo_ne[0]
    maxima = np.maximum.reduceat(segment, starts)
    group = np.repeat(np.arange(starts.size), np.diff(np.append(starts, segment.size)))
    hits = np.flatnonzero(segment == maxima[group])
    result[nonempty] = hits[np.searchsorted(hits, starts)] + lo_ne[0]
    return result


def stacked_column_image(
    values: np.ndarray,
    shown: np.ndarray,
    y_top: float,
    height: int,
    colors: np.ndarray,
    highlight: np.ndarray | None = None,
    highlight_color: tuple[int, int, int, int] = (0, 0, 0, 0),
    top_down: bool = False,
) -> np.ndarray:
    """An RGBA image (height, width, 4) of stacked bars, row 0 at the bottom (or the top).

    ``values[c, i]`` are the stacked amounts of position ``i``; ``shown`` the position of each
    pixel column (-1 for none); ``colors`` a (C, 4) uint8 table. Above its bar a column is
    transparent, or ``highlight_color`` where ``highlight`` (bool per column) is set.
    """
    categories = values.shape[0]
    width = shown.shape[0]
    height = max(int(height), 1)
    valid = shown >= 0
    stacked = np.zeros((categories, width), dtype=np.float64)
    stacked[:, valid] = values[:, shown[valid]]
    # Pixel boundaries of the cumulative stack, so rounding never drops or grows a bar.
    bounds = np.rint(np.cumsum(stacked, axis=0) * (height / max(y_top, 1e-9)))
    bounds = np.clip(bounds, 0, height).astype(np.int64)
    heights = np.diff(bounds, axis=0, prepend=0)
    filler = height - bounds[-1] if categories else np.full(width, height)
    runs = np.vstack([heights, filler[None, :]]).T.ravel()  # per column: categories, then fill
    run_ids = np.tile(np.arange(categories + 1, dtype=np.uint8), (width, 1))
    if highlight is not None:
        run_ids[:, categories] += highlight.astype(np.uint8)
    ids = np.repeat(run_ids.ravel(), runs).reshape(width, height)
    table = np.vstack([colors, np.zeros((1, 4), np.uint8), np.array([highlight_color], np.uint8)])
    table32 = np.ascontiguousarray(table).view(np.uint32).ravel()
    rows = ids.T[::-1] if top_down else ids.T
    return np.ascontiguousarray(table32[rows]).view(np.uint8).reshape(height, width, 4)


def max_columns(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per row of ``values`` (rows, n), the max over each column's [lo, hi) (heat maps);
    0 for empty columns."""
    rows = values.shape[0]
    out = np.zeros((rows, lo.shape[0]), dtype=values.dtype)
    ok = hi > lo
    if ok.any():
        starts = lo[ok]
        segment = values[:, starts[0] : hi[ok][-1]]
        out[:, ok] = np.maximum.reduceat(segment, starts - starts[0], axis=1)
    return out
