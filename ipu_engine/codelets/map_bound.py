"""A ``popops.map`` of ``max(_1, c)`` or ``min(_1, c)`` on floats (ReLU6, Clip's bounds) as
one C call a run (``kernels.bound``), its strided views of memory kept from run to run.

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

import re

import numpy as np

from ipu_engine.codelets import kernels, team
from ipu_engine.codelets.flat_views import SOURCE_ORDER_MIN_ROWS, across_rows, flat_views
from ipu_engine.poplar import workers
from ipu_engine.poplar.vertex import VertexBatch

_BOUND = re.compile(r"(maximum|minimum)\(_1, ([^(),_]+)\)")
_KEPT = "bound_views"


def bound_of(text: str, dtype: np.dtype) -> tuple[float, bool] | None:
    """(c, whether a maximum) of an expression's text ``maximum(_1, 0.0)`` on float32
    inputs; None for any other expression or type."""
    found = _BOUND.fullmatch(text)
    if found is None or dtype != np.float32:
        return None
    try:
        value = float(found.group(2))
    except ValueError:
        return None
    return value, found.group(1) == "maximum"


def run_bound(batch: VertexBatch, c: float, maximum: bool) -> bool:
    """The compute set's bound as one C call on its views of memory; False (nothing run)
    when its outputs are not one range of memory, or its input overlaps them."""
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
            lambda r: [("bound", x[r], out[r], c, maximum)], out.shape[0] if out.ndim else 0,
            x.nbytes + out.nbytes,
        )  # fmt: skip
        kept = batch.cache[_KEPT] = (pools, x, out, native)
    _, x, out, native = kept
    if native is not None:  # the team's threads, a range of rows each
        native.run(workers.cores())
    else:
        kernels.bound(x, out, np.float32(c), maximum)
    return True
