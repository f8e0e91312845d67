"""Operations whose plan ``availableMemoryProportion`` changes -- poplin's matMul,
matMulGrouped and convolution -- read from their op call's debug arguments, and the
proportion to advise.

The engine records, with each planned op's call, the proportion it was planned with
(``availableMemoryProportion``), the temporary bytes per tile of its plan
(``tempBytesPerTile``: one serial slice's received operands and partials) and its serial
slices (``serialSplit``). A proportion below that plan's share of a tile rules the plan
out, so the planner picks one with fewer temporaries per tile (serial slices if need be).

Lowering the proportion is advice only where memory is the problem (the program does not
fit, or its fullest tile is within ~10% of the limit): elsewhere it would cost cycles for
memory the program does not need, and the advice is the other way round -- a higher
proportion lets the planner pick faster plans with more temporaries per tile, within what
the fullest tile's headroom allows.
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


def advice(
    ops: list[PlannedOp], bytes_per_tile: int, what: str, headroom: int | None = None
) -> str:
    """The sentence that tells how to get ``what`` (fewer partials, less exchange) from
    ``ops``: each op's proportion, below what its plan's temporaries use now. With
    ``headroom`` (the fullest tile's free bytes, given when memory is not the problem),
    the advice is the other way round: ``more_memory_advice``."""
    if headroom is not None:
        return more_memory_advice(ops, bytes_per_tile, headroom)
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


def raised_proportion(op: PlannedOp, bytes_per_tile: int, headroom: int) -> float | None:
    """The largest proportion the fullest tile's ``headroom`` allows ``op``'s temporaries
    (what they take now plus the headroom), rounded down to a hundredth, at most 1."""
    if op.temp_bytes is None or bytes_per_tile <= 0:
        return None
    share = (op.temp_bytes + max(headroom, 0)) / bytes_per_tile
    return min(1.0, math.floor(share / HUNDREDTH + 1e-9) * HUNDREDTH)


def more_memory_advice(ops: list[PlannedOp], bytes_per_tile: int, headroom: int) -> str:
    """Memory is not short: a lower proportion would only cost cycles; a higher one, up
    to what the headroom allows, may buy cycles with the memory the program leaves free."""
    names = _join([op.name for op in ops])
    its = "its" if len(ops) == 1 else "their"
    free = (
        f"Memory is not short here: the fullest tile has {headroom:,} bytes free "
        f"({100 * headroom / bytes_per_tile:.0f}% of a tile), so a lower "
        "availableMemoryProportion would only cost cycles."
    )
    uses = _join([t for t in (_temporaries_text(op, bytes_per_tile) for op in ops) if t])
    uses = f" {uses}." if uses else ""
    raised = [(op, raised_proportion(op, bytes_per_tile, headroom)) for op in ops]
    room = [(op, p) for op, p in raised if p is None or op.proportion is None or p > op.proportion]
    if not room:
        return f"{free}{uses} {its.capitalize()} proportion already allows what the headroom does."
    if len(ops) == 1:
        (p,) = [p for _, p in room]
        limits = "its availableMemoryProportion" + ("" if p is None else f", up to {p:g}")
    else:
        each = [op.name + ("" if p is None else f" up to {p:g}") for op, p in room]
        limits = f"the availableMemoryProportion of {_join(each)}"
    squeezed = [op.name for op, _ in room if op.over_budget(bytes_per_tile)]
    planned = sorted({f"{op.proportion:g}" for op, _ in room if op.proportion is not None})
    if squeezed:
        why = (
            f" No plan of {_join(squeezed)} fitted {its} proportion, so the planner took the "
            "one needing least memory: a higher proportion lets it pick a faster one."
        )
    elif planned:
        why = (
            f" It already picked the fastest plan within {_join(planned)}, so this helps only "
            "if a faster one needs more."
        )
    else:
        why = ""
    return (
        f"{free}{uses} To spend memory on fewer cycles of {names} instead, raise {limits} "
        f"(what the headroom allows): the planner may then pick a faster plan with more "
        f"temporaries per tile.{why}"
    )


def _temporaries_text(op: PlannedOp, bytes_per_tile: int) -> str:
    if op.temp_bytes is None:
        return ""
    planned = "" if op.proportion is None else f", planned at {op.proportion:g}"
    return (
        f"{op.name}'s plan's temporaries take {op.temp_bytes:,} bytes per tile "
        f"({100 * op.temp_bytes / bytes_per_tile:.1f}% of a tile{planned})"
    )


def _join(items: list[str]) -> str:
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


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
