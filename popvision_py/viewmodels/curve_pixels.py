"""A curve over many positions (live bytes per program step) as the pixels of one image: the
largest value in each pixel column drawn as a filled area with an edge, over shaded columns
(an operation's steps) and selected positions (a light background over their whole width
and a line at their centre)."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.pixels import column_ranges, column_tiles, max_columns

# colour slots of ``area_image``'s table, in drawing order
EMPTY, BAND, SELECTED, FILL, EDGE, MARK = range(6)
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


def centre_columns(positions: np.ndarray, x0: float, x1: float, width: int) -> np.ndarray:
    """bool per pixel column: True where the centre of one of ``positions`` falls."""
    lines = np.zeros(max(int(width), 1), dtype=bool)
    positions = np.asarray(positions, dtype=np.float64)
    inside = positions[(positions >= x0) & (positions < x1)]
    columns = np.floor((inside - x0) / max(x1 - x0, 1e-9) * lines.size).astype(np.int64)
    lines[np.clip(columns, 0, lines.size - 1)] = True
    return lines


def area_image(
    heights: np.ndarray,
    y0: float,
    y1: float,
    height: int,
    colors: np.ndarray,
    band: np.ndarray,
    selected: np.ndarray,
    lines: np.ndarray,
    top_down: bool = False,
) -> np.ndarray:
    """RGBA (height, width, 4): each column filled from ``y0`` up to ``heights`` (NaN: none),
    its top ``EDGE_PIXELS`` in the edge colour; above the fill, ``selected`` columns get the
    selection colour and ``band`` columns the band colour; ``lines`` columns are drawn in the
    mark colour over everything. ``colors``: (6, 4) uint8 for EMPTY..MARK. Row 0 is the
    bottom, or the top when ``top_down``."""
    width = heights.shape[0]
    height = max(int(height), 1)
    level = (np.nan_to_num(heights, nan=y0) - y0) * (height / max(y1 - y0, 1e-9))
    level = np.clip(np.rint(level), 0, height).astype(np.int64)
    background = np.where(selected, SELECTED, np.where(band, BAND, EMPTY)).astype(np.uint8)
    rows = np.arange(height, dtype=np.int64)[:, None]
    below = rows < level[None, :]
    ids = np.where(below, np.uint8(FILL), background[None, :])
    ids[below & (rows >= level[None, :] - EDGE_PIXELS)] = EDGE
    ids[:, lines] = MARK
    table32 = np.ascontiguousarray(colors.astype(np.uint8)).view(np.uint32).ravel()
    pixels = table32[ids[::-1] if top_down else ids]
    return np.ascontiguousarray(pixels).view(np.uint8).reshape(height, width, 4)
