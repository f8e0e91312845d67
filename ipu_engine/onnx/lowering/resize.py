"""Resize and Upsample: nearest, linear and cubic, with every coordinate transformation mode
the exporters write (half_pixel, pytorch_half_pixel, align_corners, asymmetric,
tf_half_pixel_for_nn, tf_crop_and_resize, half_pixel_symmetric), antialiasing, exclude_outside,
axes and keep_aspect_ratio_policy.

A resize is separable: one pass per resized axis, in axis order, each output row a weighted
sum of input rows whose taps and weights are worked out here on the host from the
geometry (as ONNX's specification defines them) and run as ``popops.resample``. A pass that
only repeats rows (nearest upsampling by a whole factor) is a broadcast view and one that
only skips rows (nearest downsampling by one) a strided view: no copy, no compute.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ipu_engine.frontend.array_ops import broadcast_to
from ipu_engine.frontend.resample_ops import resample
from ipu_engine.onnx.lowering.common import traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering

_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "tf_crop_and_resize",
)


def source_coordinates(
    mode: str, size: int, out: int, scale: float, roi: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Each output position's coordinate in the input (ONNX's coordinate transformation
    ``mode``), and whether it lies outside a crop (tf_crop_and_resize only)."""
    y = np.arange(out, dtype=np.float64)
    resized = scale * size  # the specification's length_resized, before rounding
    outside = np.zeros(out, dtype=bool)
    if mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    elif mode == "half_pixel_symmetric":
        offset = size / 2 * (1 - out / resized)
        x = offset + (y + 0.5) / scale - 0.5
    elif mode == "pytorch_half_pixel":
        x = (y + 0.5) / scale - 0.5 if resized > 1 else np.zeros(out)
    elif mode == "align_corners":
        x = y * (size - 1) / (resized - 1) if resized != 1 else np.zeros(out)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "tf_half_pixel_for_nn":
        x = (y + 0.5) / scale
    else:  # tf_crop_and_resize
        start, end = roi
        if resized != 1:
            x = start * (size - 1) + y * (end - start) * (size - 1) / (resized - 1)
        else:
            x = np.full(out, (start + end) / 2 * (size - 1))
        outside = (x < 0) | (x > size - 1)
    return x, outside


def nearest_rows(x: np.ndarray, rule: str, scale: float) -> np.ndarray:
    """The input row each coordinate rounds to (``rule``: ONNX's nearest_mode, or "simple",
    opset < 11's: floor when upsampling, ceil when downsampling)."""
    low = np.floor(x)
    exact = x == low
    frac = x - low
    if rule == "simple":
        rule = "ceil" if scale < 1 else "floor"
    up = {
        "round_prefer_floor": frac > 0.5,
        "round_prefer_ceil": frac >= 0.5,
        "floor": np.zeros(x.shape, dtype=bool),
        "ceil": np.ones(x.shape, dtype=bool),
    }[rule]
    return np.where(exact, x, low + up).astype(np.int64)


def _kernel(mode: str, distance: np.ndarray, a: float) -> np.ndarray:
    d = np.abs(distance)
    if mode == "linear":
        return np.clip(1 - d, 0, None)
    inner = ((a + 2) * d - (a + 3)) * d * d + 1
    outer = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, inner, np.where(d < 2, outer, 0.0))


def resize_taps(
    size: int, out: int, scale: float, attrs: dict[str, Any], roi: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One axis's (rows [out, taps], weights [out, taps], extrapolated [out])."""
    x, outside = source_coordinates(attrs["ctm"], size, out, scale, roi)
    if attrs["mode"] == "nearest":
        rows = np.clip(nearest_rows(x, attrs["nearest"], scale), 0, size - 1)[:, None]
        weights = np.ones(rows.shape)
    else:
        reach = 1.0 if attrs["mode"] == "linear" else 2.0
        stretch = min(scale, 1.0) if attrs["antialias"] else 1.0
        half = math.ceil(reach / stretch - 1e-9)
        rows = np.floor(x).astype(np.int64)[:, None] + np.arange(1 - half, half + 1)
        weights = _kernel(attrs["mode"], (rows - x[:, None]) * stretch, attrs["cubic_a"])
        if attrs["antialias"]:
            weights = weights / weights.sum(axis=1, keepdims=True)
        if attrs["exclude_outside"]:
            weights = np.where((rows < 0) | (rows >= size), 0.0, weights)
            total = weights.sum(axis=1, keepdims=True)
            weights = weights / np.where(total == 0, 1.0, total)
        rows = np.clip(rows, 0, size - 1)
    weights = np.where(outside[:, None], 0.0, weights)
    return rows, weights, outside


def _attrs(ctx: NodeContext) -> dict[str, Any]:
    mode = ctx.attr("mode", "nearest")
    if ctx.op_type == "Upsample" or ctx.opset < 11:
        ctm, nearest = "asymmetric", "simple"
        mode = "linear" if mode in ("linear", "bilinear") else mode
    else:
        ctm = ctx.attr("coordinate_transformation_mode", "half_pixel")
        nearest = ctx.attr("nearest_mode", "round_prefer_floor")
    attrs = {
        "mode": mode,
        "ctm": ctm,
        "nearest": nearest,
        "cubic_a": float(ctx.attr("cubic_coeff_a", -0.75)),
        "exclude_outside": bool(ctx.attr("exclude_outside", 0)),
        "antialias": bool(ctx.attr("antialias", 0)),
        "extrapolation": float(ctx.attr("extrapolation_value", 0.0)),
    }
    for key, value, allowed in (
        ("mode", mode, ("nearest", "linear", "cubic")),
        ("coordinate_transformation_mode", ctm, _MODES),
        ("nearest_mode", nearest, (*_NEAREST, "simple")),
    ):
        if value not in allowed:
            raise ctx.unsupported(key, value)
    if attrs["antialias"] and mode == "nearest":
        raise ctx.error("antialias=1 applies to linear and cubic modes, not nearest")
    return attrs


def _geometry(ctx: NodeContext, x: Any, args: tuple) -> list[tuple[float, int, tuple]]:
    """(scale, output size, roi) of every axis, from Upsample's or Resize's inputs."""
    rank = len(x.shape)
    if ctx.op_type == "Upsample":
        given = ctx.attr("scales") if ctx.opset < 9 else (args[0] if args else None)
        roi, scales, sizes = None, given, None
    elif ctx.opset < 11:
        roi, scales, sizes = None, args[0] if args else None, None
    else:
        roi, scales, sizes = (list(args) + [None] * 3)[:3]
    if traced(roi, scales, sizes):
        raise ctx.error("its roi, scales and sizes must be known before the model runs")
    axes = ctx.attr("axes")
    axes = list(range(rank)) if axes is None else [int(a) % rank for a in axes]
    scale = [1.0] * rank
    out = list(x.shape)
    box = [(0.0, 1.0)] * rank
    if roi is not None and np.asarray(roi).size:
        values = np.asarray(roi, dtype=np.float64).reshape(-1)
        n = len(axes)
        for i, a in enumerate(axes):
            box[a] = (float(values[i]), float(values[n + i]))
    if sizes is not None and np.asarray(sizes).size:
        wanted = [int(v) for v in np.asarray(sizes).reshape(-1)]
        ratios = [w / x.shape[a] for w, a in zip(wanted, axes, strict=True)]
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy in ("not_larger", "not_smaller"):
            kept = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [kept] * len(axes)
            wanted = [int(kept * x.shape[a] + 0.5) for a in axes]
        elif policy != "stretch":
            raise ctx.unsupported("keep_aspect_ratio_policy", policy)
        for a, r, w in zip(axes, ratios, wanted, strict=True):
            scale[a], out[a] = r, w
    elif scales is not None and np.asarray(scales).size:
        values = [float(v) for v in np.asarray(scales).reshape(-1)]
        for a, s in zip(axes, values, strict=True):
            if s <= 0:
                raise ctx.error(f"scale {s} of axis {a} must be positive")
            scale[a], out[a] = s, int(s * x.shape[a])
    else:
        raise ctx.error("needs scales or sizes")
    return [(scale[a], out[a], box[a]) for a in range(rank)]


def _view(x: Any, axis: int, rows: np.ndarray, weights: np.ndarray, fill: np.ndarray) -> Any:
    """A pass that takes whole rows unchanged as a view (broadcast or strided slice), or
    None when its rows need arithmetic."""
    if rows.shape[1] != 1 or np.any(weights != 1) or np.any(fill != 0):
        return None
    taken = rows[:, 0]
    size, out = x.shape[axis], taken.size
    if out % size == 0 and np.array_equal(taken, np.arange(out) // (out // size)):
        factor = out // size
        grown = x.reshape(*x.shape[: axis + 1], 1, *x.shape[axis + 1 :])
        target = (*x.shape[: axis + 1], factor, *x.shape[axis + 1 :])
        return broadcast_to(grown, target).reshape(*x.shape[:axis], out, *x.shape[axis + 1 :])
    step = int(taken[1] - taken[0]) if out > 1 else 1
    if step >= 1 and np.array_equal(taken, taken[0] + step * np.arange(out)):
        key = (slice(None),) * axis + (slice(int(taken[0]), int(taken[-1]) + 1, step),)
        return x[key]
    return None


@lowering("Resize", "Upsample", since=7, host_weights=True, host_inputs=(1, 2, 3))
def resize(ctx: NodeContext, x: Any, *args: Any) -> Any:
    attrs = _attrs(ctx)
    kind = x.dtype.numpy_dtype.kind if traced(x) else np.asarray(x).dtype.kind
    if kind != "f" and attrs["mode"] != "nearest":
        raise ctx.error(f"mode {attrs['mode']!r} of integer data is not supported (nearest is)")
    for axis, (scale, out, box) in enumerate(_geometry(ctx, x, args)):
        size = x.shape[axis]
        if (
            out == size
            and math.isclose(scale, 1.0)
            and (attrs["ctm"] != "tf_crop_and_resize" or box == (0.0, 1.0))
        ):
            continue  # identity along this axis
        if size == 0 or out < 1:
            raise ctx.error(f"axis {axis}: cannot resize {size} elements to {out}")
        rows, weights, outside = resize_taps(size, out, scale, attrs, box)
        fill = np.where(outside, attrs["extrapolation"], 0.0)
        viewed = _view(x, axis, rows, weights, fill) if traced(x) else None
        x = viewed if viewed is not None else resample(x, axis, rows, weights, fill)
    return x if traced(x) else np.array(x)
