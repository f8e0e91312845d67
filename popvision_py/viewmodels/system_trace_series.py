"""Metric series and heatmaps of a trace, reduced to the pixels of a window: a series to a
min and a max per pixel column (drawn as steps), a heatmap to one bucket-count column per
pixel column."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from profiler_core.trace.model import Heatmap


def series_window(
    t: np.ndarray, values: np.ndarray, x0: float, x1: float, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Points to draw of a series in [x0, x1): the samples themselves when there are few,
    else each pixel column's min and max (at its centre), plus one sample either side so
    the line reaches the window's edges."""
    # int keys: a float key would convert the whole int64 column to float on every search
    lo = max(int(np.searchsorted(t, int(np.ceil(x0)), side="left")) - 1, 0)
    hi = min(int(np.searchsorted(t, int(np.floor(x1)), side="right")) + 1, len(t))
    ts, vs = t[lo:hi].astype(np.float64), values[lo:hi].astype(np.float64)
    if len(ts) <= 2 * width or width < 1:
        return ts, vs
    column = np.clip(np.floor((ts - x0) / (x1 - x0) * width), -1, width).astype(np.int64)
    starts = np.flatnonzero(np.concatenate([[True], column[1:] != column[:-1]]))
    low = np.minimum.reduceat(vs, starts)
    high = np.maximum.reduceat(vs, starts)
    centre = x0 + (column[starts] + 0.5) * (x1 - x0) / width
    centre[0], centre[-1] = ts[0], ts[-1]  # the outside samples stay where they are
    x = np.repeat(centre, 2)
    y = np.column_stack([low, high]).ravel()
    return x, y


def step_points(x: np.ndarray, y: np.ndarray, until: float) -> tuple[np.ndarray, np.ndarray]:
    """A counter drawn as steps: each value holds from its sample to the next one (the last
    to ``until``, the trace's end), as chrome://tracing and Perfetto draw counters. A NaN
    value leaves its interval empty (a gap, with ``connect="finite"``)."""
    if len(x) == 0:
        return x, y
    ends = np.append(x[1:], max(float(x[-1]), until))
    xs = np.column_stack([x, ends]).ravel()
    ys = np.repeat(y, 2)
    return xs, ys


def heatmap_window(heatmap: Heatmap, x0: float, x1: float, width: int) -> np.ndarray:
    """(buckets, width) float: the counts of the sample in force at the end of each pixel
    column (the latest sample at or before it, so every sample in view owns the column it
    falls in, the last one of a trace too), NaN before the first sample and after the last
    one's interval."""
    out = np.full((heatmap.counts.shape[1], width), np.nan)
    t = heatmap.t_ns
    if len(t) == 0 or width < 1:
        return out
    left = x0 + np.arange(width + 1) * (x1 - x0) / width
    # columns [a, b), the last one [a, x1]: a sample at the window's end is in view
    sample = np.searchsorted(t, left[1:], side="left") - 1
    sample[-1] = np.searchsorted(t, left[-1], side="right") - 1
    step = float(np.median(np.diff(t))) if len(t) > 1 else max(x1 - x0, 1.0)
    ok = (sample >= 0) & (left[:-1] < t[-1] + step)
    out[:, ok] = heatmap.counts[sample[ok]].T
    return out


def bucket_names(edges: np.ndarray, unit: str = "") -> list[str]:
    """Names of a heatmap's buckets: ``< e0``, ``e0 – e1``, ..., ``≥ e_last``."""
    suffix = f" {unit}" if unit else ""
    values = [f"{e:g}" for e in edges]
    names = [f"< {values[0]}{suffix}"] if values else ["all"]
    names += [f"{a} – {b}{suffix}" for a, b in pairwise(values)]
    if values:
        names.append(f"≥ {values[-1]}{suffix}")
    return names
