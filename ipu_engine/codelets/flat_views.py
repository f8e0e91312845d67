"""An element-wise compute set as one numpy call over strided views of memory.

An element-wise result does not depend on which vertex computes which element, so the
elements can be taken in the order of the output's addresses. When the outputs of all
vertices together are one contiguous range of memory, and each operand, in that order, is
an N-d strided pattern (an NCHW view of an NHWC tensor is [C, H x W] with steps [1, C]; a
per-channel scale broadcast over pixels is [C, H x W] with steps [1, 0]), the op runs on
views: no operand gathered, no output scattered. The pattern is found once per compiled
compute set; only its shape and steps are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_engine.codelets import team
from ipu_engine.codelets.scratch import scratch
from ipu_engine.poplar import strided
from ipu_engine.poplar.arrays import memory_view, strided_pattern
from ipu_engine.poplar.vertex import VertexBatch


@dataclass(frozen=True)
class FlatView:
    """Elements ``first + sum(index[k] * steps[k])`` over ``shape``, of one field's pool."""

    first: int
    shape: tuple[int, ...]
    steps: tuple[int, ...]

    def of(self, pool: np.ndarray) -> np.ndarray:
        """The view (``memory_view`` refuses one reaching outside ``pool``)."""
        return memory_view(pool, self.first, self.shape, self.steps)


# output rows (channels) from which a transposing op runs in its operand's order: there
# numpy reads each of the operand's rows contiguously and writes across the output's
# rows; below, the operand is copied into rows first (see ``apply_on_views``)
SOURCE_ORDER_MIN_ROWS = 128


def apply_on_views(fn: Callable[..., Any], args: list[np.ndarray], out: np.ndarray) -> None:
    """``fn(*args, out=out)``; when an operand is read across the output's rows (an NHWC
    activation into an NCHW one: [C, H x W] with steps [1, C]):
    - of many rows, apart from the output: copied into the output itself by
      ``strided.copy``, then ``fn`` in place (a ResNet-50 batch-norm's scale, [256, 3136]:
      0.28 ms, against 0.65 ms for numpy in the operand's order, and copying into scratch
      rows first was slower still: its copies of MBs leaving the cache);
    - of many rows otherwise, in that operand's order: ``fn`` over every array
      transposed, so each of its rows is read contiguously;
    - of fewer rows, the operand is first copied in the output's order into scratch rows
      by ``strided.copy`` (16 x 16 tiles transposed in registers), and ``fn`` runs on
      contiguous rows: numpy read it a cache line per element (the MobileNet block's
      ReLU6, [64, 3136]: 0.25 -> 0.13 ms).
    The same values: an element-wise op does not depend on the order, and a copy made
    before ``fn`` writes is what numpy makes of an operand that overlaps the output."""
    if _transposing(args, out):
        into = _into_output(args, out)
        if into is not None:
            strided.copy(out, args[into])
            fn(*(out if k == into else a for k, a in enumerate(args)), out=out)
        else:
            fn(*(a.T for a in args), out=out.T)
    elif _rows_out(out) and any(map(across_rows, args)):
        rows = [
            in_rows(a, out.shape, f"flat_views_operand{i}") if across_rows(a) else a
            for i, a in enumerate(args)
        ]
        fn(*rows, out=out)
    else:
        fn(*args, out=out)


def views_plan(fn: Callable[..., Any], args: list[np.ndarray], out: np.ndarray) -> Any:
    """``apply_on_views``' work as a team plan cut by the output's rows (``team``: run on
    every core without the GIL, the same values), when C computes ``fn`` alike
    (``team.map_steps``): on the views as they are, or -- an operand read across the
    output's rows, of any count of rows -- on the output after that operand is copied
    into it (``strided.copy``'s tiles); else None (``apply_on_views`` runs it)."""
    nbytes = sum(a.nbytes for a in args) + out.nbytes
    if not (_rows_out(out) and any(map(across_rows, args))):
        steps = team.map_steps(fn, args, out)
        return None if steps is None else team.rows_plan(steps, len(out), nbytes)
    into = _into_output(args, out)
    if into is None:
        return None
    source = args[into]
    made = team.map_steps(fn, [out if k == into else a for k, a in enumerate(args)], out)
    if made is None:
        return None
    return team.rows_plan(lambda r: [("copy", out[r], source[r]), *made(r)], len(out), nbytes)


def _rows_out(out: np.ndarray) -> bool:
    """Whether the output is 2-D, written row by row."""
    return out.ndim == 2 and out.strides[1] == out.itemsize


def _transposing(args: list[np.ndarray], out: np.ndarray) -> bool:
    """Whether an output of many rows, written row by row, has an operand whose rows are
    closer in memory than its columns."""
    rows = _rows_out(out) and out.shape[0] >= SOURCE_ORDER_MIN_ROWS
    return rows and any(map(across_rows, args))


def _into_output(args: list[np.ndarray], out: np.ndarray) -> int | None:
    """The operand read across the output's rows that may be copied into the output
    first (its shape and item type, and no operand sharing the output's memory), or
    None."""
    if any(np.may_share_memory(a, out) for a in args):
        return None
    for k, a in enumerate(args):
        if across_rows(a) and a.shape == out.shape and a.dtype == out.dtype:
            return k
    return None


def across_rows(a: np.ndarray) -> bool:
    """Whether a 2-D operand's rows are closer in memory than its columns."""
    return a.ndim == 2 and 0 < abs(a.strides[0]) < abs(a.strides[1]) and a.shape[1] > 1


def in_rows(a: np.ndarray, shape: tuple[int, ...], purpose: str) -> np.ndarray:
    """``a`` copied into contiguous scratch rows of ``shape`` (valid until the next use
    of ``purpose``)."""
    rows = scratch(purpose, shape, a.dtype)
    strided.copy(rows, np.broadcast_to(a, shape))
    return rows


def _common_sizes(patterns: list[list[int]]) -> list[int] | None:
    """Sizes (innermost first) that split every pattern's dimensions, or None."""
    bounds = sorted({int(b) for sizes in patterns for b in np.cumprod(sizes)})
    common, below = [], 1
    for b in bounds:
        if b % below:
            return None
        common.append(b // below)
        below = b
    return common


def _split(sizes: list[int], steps: list[int], common: list[int]) -> tuple[int, ...]:
    """The steps of a pattern over the common sizes (innermost first)."""
    out, k, below_k, below = [], 0, 1, 1
    for n in common:
        while below >= below_k * sizes[k]:
            below_k *= sizes[k]
            k += 1
        out.append(steps[k] * (below // below_k))
        below *= n
    return tuple(out)


def flat_views(batch: VertexBatch, operands: tuple[str, ...], result: str) -> dict | None:
    """{field: FlatView} of ``result`` and ``operands`` for an element-wise codelet, found
    once per compiled compute set; None when the outputs are not one contiguous range or
    an operand is not a strided pattern in their order."""
    key = ("flat_views", operands, result)
    if key not in batch.cache:
        batch.cache[key] = _find(batch, operands, result)
    return batch.cache[key]


def _find(batch: VertexBatch, operands: tuple[str, ...], result: str) -> dict | None:
    sizes = batch.sizes(result)
    if batch.count == 0 or any(not np.array_equal(batch.sizes(f), sizes) for f in operands):
        return None
    out = batch.addresses(result)
    if out.size < 2:
        return None
    order = np.argsort(out, kind="stable")
    lo = int(out[order[0]])
    if not np.array_equal(out[order], lo + np.arange(out.size, dtype=np.int64)):
        return None
    found = {}
    for name in dict.fromkeys(operands):
        pattern = strided_pattern(batch.addresses(name)[order])
        if pattern is None:
            return None
        found[name] = pattern
    common = _common_sizes([p[1] for p in found.values()] + [[out.size]])
    if common is None:
        return None
    shape = tuple(reversed(common))
    views = {
        name: FlatView(first, shape, tuple(reversed(_split(sizes_, steps, common))))
        for name, (first, sizes_, steps) in found.items()
    }
    views[result] = FlatView(lo, shape, tuple(reversed(_split([out.size], [1], common))))
    return views
