"""Operations whose plan ``availableMemoryProportion`` changes -- poplin's matMul,
matMulGrouped and convolution -- read from their op call's debug arguments, and the
proportion to advise.

The engine records, with each planned op's call, the proportion it was planned with
(``availableMemoryProportion``), the temporary bytes per tile of its plan
(``tempBytesPerTile``: one serial slice's received operands and partials) and its serial
slices (``serialSplit``). A proportion below that plan's share of a tile rules the plan
out, so the planner picks one with fewer temporaries per tile (serial slices if need be).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from profiler_core.analysis.debug_groups import debug_column

PLANNED_OPS = frozenset({"poplin::matMul", "poplin::matMulGrouped", "poplin::convolution"})
ADVISED_SHARE = 0.5  # advise half the share of a tile the plan's temporaries use now
HUNDREDTH = 0.01


@dataclass(frozen=True)
class PlannedOp:
    """A matmul, grouped matmul or convolution call: its name, op and what its plan recorded."""

    name: str
    op: str
    proportion: float | None  # None: a report written before the engine recorded it
    temp_bytes: int | None

    def advised_proportion(self, bytes_per_tile: int) -> float | None:
        """Half the share of a tile the plan's temporaries take now, rounded down to a
        hundredth (below 0.01, to one significant digit): a proportion that rules the
        current plan out."""
        if self.temp_bytes is None or bytes_per_tile <= 0:
            return None
        share = ADVISED_SHARE * self.temp_bytes / bytes_per_tile
        step = HUNDREDTH if share >= HUNDREDTH else 10 ** math.floor(math.log10(share))
        return round(math.floor(share / step + 1e-9) * step, 12)

    def over_budget(self, bytes_per_tile: int) -> bool:
        """Whether the plan's temporaries exceed its proportion: no split fitted."""
        if self.temp_bytes is None or self.proportion is None:
            return False
        return self.temp_bytes > self.proportion * bytes_per_tile


def advice(ops: list[PlannedOp], bytes_per_tile: int, what: str) -> str:
    """The sentence that tells how to get ``what`` (fewer partials, less exchange) from
    ``ops``: each op's proportion, below what its plan's temporaries use now."""
    advised = [op.advised_proportion(bytes_per_tile) for op in ops]
    names = _join([op.name for op in ops])
    tail = (
        f"the planner then picks plans with {what}, in serial slices if need be, at some "
        "cost in cycles."
    )
    least = [op.name for op in ops if op.over_budget(bytes_per_tile)]
    if least:
        return (
            f"The plan of {_join(least)} already needs more than its availableMemoryProportion "
            "allows: the planner took the split needing least temporary memory, so a lower "
            "proportion would not change it."
        )
    if any(p is None for p in advised):
        return (
            f"Lower the availableMemoryProportion of {names} below the share of a tile "
            f"the plans' temporaries use (this report does not record it): {tail}"
        )
    if len(ops) == 1:
        (op,) = ops
        planned = "" if op.proportion is None else f", planned at {op.proportion:g}"
        return (
            f"Set the availableMemoryProportion of {op.name} to {advised[0]:g} or lower "
            f"(its plan's temporaries take {op.temp_bytes:,} bytes per tile now, "
            f"{100 * op.temp_bytes / bytes_per_tile:.1f}% of a tile{planned}): {tail}"
        )
    each = _join([f"{op.name} to {p:g}" for op, p in zip(ops, advised, strict=True)])
    return (
        f"Set the availableMemoryProportion of {each} or lower (each makes an exchange this "
        f"large, so lowering one alone leaves the others'): {tail}"
    )


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def planned_op(debug: Any, context: int) -> PlannedOp | None:
    """The planned op whose call is the debug context ``context``, else None."""
    if debug is None or not 0 <= context < len(debug.parent):
        return None
    (op,) = debug_column(debug, "op", [context])
    if op not in PLANNED_OPS:
        return None
    (name,) = debug_column(debug, "name", [context])
    args = debug.args[context]
    args = args if isinstance(args, dict) else {}
    proportion, temp = args.get("availableMemoryProportion"), args.get("tempBytesPerTile")
    return PlannedOp(
        name,
        op,
        float(proportion) if isinstance(proportion, int | float) else None,
        int(temp) if isinstance(temp, int) and temp > 0 else None,
    )
