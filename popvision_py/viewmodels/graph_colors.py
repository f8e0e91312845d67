"""The Operations graph's colours without Qt: a node's metric as one of a few shades of a
sequential ramp (log scale: a convolution's cycles and a ReLU's differ a hundredfold), grey
for a node without figures, and the text colour that reads on each shade."""

from __future__ import annotations

import numpy as np

RAMP = (
    "#fff3b0",
    "#ffe08a",
    "#fdc46a",
    "#f9a451",
    "#f07f3c",
    "#df5a2f",
    "#c23a25",
    "#97201b",
)
NO_FIGURES = "#c9ccd1"
DARK_TEXT, LIGHT_TEXT = "#1b1b1b", "#ffffff"
#: the text colour on each shade (light text from the fifth shade on)
RAMP_TEXT = tuple(DARK_TEXT if k < 5 else LIGHT_TEXT for k in range(len(RAMP)))
BANDS = ("#5b8def", "#43a37b", "#b76ad1", "#d9a03f", "#4bb3c4", "#d16a6a")
"""Pipeline stages and IPUs, in turn (drawn faint behind the nodes)."""


def shade_of(values: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Each node's shade (index into ``RAMP``; -1 without figures) by log of its value
    between the smallest and largest positive value, and those two values (0, 0 when no
    node has a positive one). A node whose figure is 0 takes the lightest shade."""
    values = np.asarray(values, dtype=np.float64)
    known = np.asarray(known, dtype=bool)
    shade = np.full(len(values), -1, dtype=np.int64)
    shade[known] = 0
    positive = known & (values > 0)
    if not positive.any():
        return shade, 0.0, 0.0
    lo, hi = float(values[positive].min()), float(values[positive].max())
    span = np.log(hi) - np.log(lo)
    if span <= 0:
        shade[positive] = len(RAMP) - 1
        return shade, lo, hi
    where = (np.log(values[positive]) - np.log(lo)) / span
    shade[positive] = np.minimum((where * len(RAMP)).astype(np.int64), len(RAMP) - 1)
    return shade, lo, hi
