"""A curve over many positions (live bytes per program step) as the pixels of one image: the
largest value in each pixel column drawn as a filled area with an edge, over shaded columns
(an operation's steps) and under marked columns (selected steps)."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.pixels import column_ranges, column_tiles, max_columns

# colour slots of ``area_image``'s table, in drawing order
EMPTY, BAND, FILL, EDGE, MARK = range(5)
EDGE_PIXELS = 2


def columns_of(
    values: np.ndarray, x0: float, x1: float, width: int, *flags: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """For ``width`` pixel columns over positions [x0, x1): the position each shows (the
    largest value's, -1 for none), and for each bool array in ``flags`` whether any position
    of the column is set."""
    shown = column_tiles(values, x0, x1, width)
    lo, hi = column_ranges(values.shape[0], x0, x1, width)
    anys = [max_columns(flag[None, :].astype(np.uint8), lo, hi)[0] > 0 for flag in flags]
    return shown, anys


def area_image(
    heights: np.ndarray,
    y0: float,
    y1: float,
    height: int,
    colors: np.ndarray,
    band: np.ndarray,
    marks: np.ndarray,
    top_down: bool = False,
) -> np.ndarray:
    """RGBA (height, width, 4): each column filled from ``y0`` up to ``heights`` (NaN: none),
    its top ``EDGE_PIXELS`` in the edge colour; ``band`` columns shaded behind, ``marks``
    columns drawn over everything. ``colors``: (5, 4) uint8 for EMPTY..MARK. Row 0 is the
    bottom, or the top when ``top_down``."""
    width = heights.shape[0]
    height = max(int(height), 1)
    level = (np.nan_to_num(heights, nan=y0) - y0) * (height / max(y1 - y0, 1e-9))
    level = np.clip(np.rint(level), 0, height).astype(np.int64)
    rows = np.arange(height, dtype=np.int64)[:, None]
    ids = np.where(band[None, :], BAND, EMPTY).astype(np.uint8) * np.ones((height, 1), np.uint8)
    ids[rows < level[None, :]] = FILL
    ids[(rows < level[None, :]) & (rows >= level[None, :] - EDGE_PIXELS)] = EDGE
    ids[:, marks] = MARK
    table32 = np.ascontiguousarray(colors.astype(np.uint8)).view(np.uint32).ravel()
    return (
        np.ascontiguousarray(table32[ids[::-1] if top_down else ids])
        .view(np.uint8)
        .reshape(height, width, 4)
    )
