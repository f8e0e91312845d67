"""A ``popops.map`` of ``max(_1, c)`` or ``min(_1, c)`` on floats, or one of the other
(``min(max(_1, low), high)``: Clip, ReLU6), as C calls a run (``kernels.bound``), its
strided views of memory kept from run to run. A clamp's second bound runs on each piece
of rows right after its first, while the rows are in cache.

The general map evaluates its expression tree in Python on every run (constants made
into arrays, shapes broadcast, types found: ~20 us) after finding its views (~15 us);
for a bound by one value that is most of its time on the MobileNet block's 200k
elements. The views are found once (``flat_views``) and kept while memory is the same
arrays; an operand read across fewer than 128 output rows (an NHWC activation read as
NCHW) is bound 16 rows at a time, copied in tiles transposed in registers and bound
while in cache (more rows: the general path, which runs in the operand's order). The
values are numpy's bit for bit (``kernels.bound``).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ipu_engine.codelets import kernels, team
from ipu_engine.codelets.flat_views import SOURCE_ORDER_MIN_ROWS, across_rows, flat_views
from ipu_engine.poplar import workers
from ipu_engine.poplar.vertex import VertexBatch

_OP = r"(maximum|minimum)\("
_VALUE = r", ([^(),_]+)\)"
_BOUND = re.compile(_OP + r"_1" + _VALUE)
_CLAMP = re.compile(_OP + _OP + r"_1" + _VALUE + _VALUE)
_KEPT = "bound_views"

Bound = tuple[float, bool]  # (c, whether a maximum)


def bounds_of(text: str, dtype: np.dtype) -> list[Bound] | None:
    """The bounds, innermost first, of an expression's text on float32 inputs:
    ``maximum(_1, 0.0)`` is [(0.0, True)], ``minimum(maximum(_1, 0.0), 6.0)`` is
    [(0.0, True), (6.0, False)]; None for any other expression or type."""
    found = _BOUND.fullmatch(text) or _CLAMP.fullmatch(text)
    if found is None or dtype != np.float32:
        return None
    groups = found.groups()  # outer op, [inner op,] inner value, [outer value]
    ops = groups[: len(groups) // 2][::-1]
    try:
        values = [float(v) for v in groups[len(groups) // 2 :]]
    except ValueError:
        return None
    return [(value, op == "maximum") for op, value in zip(ops, values, strict=True)]


def run_bound(batch: VertexBatch, bounds: list[Bound]) -> bool:
    """The compute set's bounds as C calls on its views of memory, the first from the input
    to the output, the next in place; False (nothing run) when its outputs are not one
    range of memory, or its input overlaps them."""
    pools = (batch.pool("in0"), batch.pool("out"))
    kept = batch.cache.get(_KEPT)
    if kept is None or any(a is not b for a, b in zip(kept[0], pools, strict=True)):
        views = flat_views(batch, ("in0",), "out")
        if views is None:
            return False
        x, out = views["in0"].of(pools[0]), views["out"].of(pools[1])
        rows = out.ndim == 2 and out.strides[1] == out.itemsize and across_rows(x)
        same = x.__array_interface__ == out.__array_interface__
        if rows and out.shape[0] >= SOURCE_ORDER_MIN_ROWS:
            return False  # run in the operand's order (``apply_on_views``): the general path
        if not same and not team.apart(x, out):
            return False  # numpy copies an overlapping operand first: the general path
        native = team.rows_plan(
            lambda r: _steps(x[r], out[r], bounds), out.shape[0] if out.ndim else 0,
            len(bounds) * (x.nbytes + out.nbytes),
        )  # fmt: skip
        kept = batch.cache[_KEPT] = (pools, x, out, native)
    run = functools.partial(_run_kept, *kept[1:], bounds)
    run()
    batch.repeat(run)  # the next runs: this call alone
    return True


def _run_kept(
    x: np.ndarray, out: np.ndarray, native: team.TeamPieces | None, bounds: list[Bound]
) -> None:
    if native is not None:  # the team's threads, a range of rows each
        native.run(workers.cores())
        return
    for _, source, target, c, maximum in _steps(x, out, bounds):
        kernels.bound(source, target, np.float32(c), maximum)


def _steps(x: np.ndarray, out: np.ndarray, bounds: list[Bound]) -> list[tuple]:
    """The team's bound steps: the first bound from ``x`` into ``out``, the rest in place."""
    return [
        ("bound", x if i == 0 else out, out, c, maximum) for i, (c, maximum) in enumerate(bounds)
    ]
