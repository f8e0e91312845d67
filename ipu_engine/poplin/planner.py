"""The matmul planner: how to split C[M,N] = A[M,K] @ B[K,N] over tiles.

A plan cuts the rows of A and C into ``serial`` slices computed one after the other,
and each slice's M, N and K into ``sm x sn x sk`` blocks, one partial product per tile.
Like PopLibs' planner it picks the split with the fewest estimated cycles (compute on
the AMP, exchange of the operands, reduction of K partials, times the serial slices)
among those whose temporary memory per tile -- one slice's exchanged operand blocks and
partials, which every slice reuses -- stays within ``available_memory_proportion`` of a
tile (default 0.6, as Poplar). Serial slices cost cycles (each exchanges its operands and
synchronises again), so a plan is serial only when no parallel split fits the budget.
When no split fits at all, it takes the one needing least memory and says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ipu_engine.common.arguments import count_arg, name_arg, number_arg
from ipu_engine.common.errors import GraphError
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poputil.splits import split_counts

log = logging.getLogger("poplibs.poplin")

SERIAL_GROWTH = 1.5  # serial slice counts tried grow geometrically: 1, 2, 3, 5, 8, ...
SERIAL_AFTER_FIT = 2  # slice counts tried after the first that fits (one may be faster)


@dataclass(frozen=True)
class MatMulPlan:
    sm: int
    sn: int
    sk: int
    bm: int  # block rows of A and C
    bn: int  # block columns of B and C
    bk: int  # block of the shared dimension
    cycles: float
    temp_bytes: int  # per tile, for one serial slice (the slices reuse it)
    fits_budget: bool
    serial: int = 1  # slices of the rows computed one after the other
    slice_rows: int = 0  # rows of A and C per serial slice (the last may have fewer)
    sg: int = 1  # group blocks (a grouped matmul's G)
    bg: int = 1  # groups per block: their products share the block's tiles

    @property
    def num_partials(self) -> int:
        """Partial products of one serial slice (one per tile)."""
        return self.sg * self.sm * self.sn * self.sk


def _counts(api: str, **values: object) -> list[int]:
    """Each of ``values`` as a count >= 1 (sizes, tiles, bytes), in order."""
    out = []
    for name, value in values.items():
        number = count_arg(value, f"{api}: {name}", limit=2**62)
        if number < 1:
            raise GraphError(f"{api}: {name} must be at least 1, got {number}")
        out.append(number)
    return out


def _serial_counts(m: int) -> list[int]:
    """Serial slice counts to try, fewest first: distinct slice sizes, growing geometrically."""
    counts, s = [], 1.0
    while int(s) < m:
        counts.append(int(s))
        s = max(s * SERIAL_GROWTH, s + 1)
    counts.append(m)
    rows = sorted({-(-m // c) for c in counts}, reverse=True)
    return [-(-m // r) for r in rows]


@dataclass(frozen=True)
class SerialChoice:
    """The plan picked among every serial slice count's candidates."""

    serial: int  # slices computed one after the other
    slice_size: int  # of the serialised dimension, per slice (the last may have fewer)
    split: dict[str, int]  # the chosen candidate's parallel split and block sizes
    cycles: float  # of every slice
    temp_bytes: int  # per tile, of one slice (the slices reuse it)
    fits_budget: bool


SliceCandidates = Callable[[int], tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]]


def choose_serial_plan(
    size: int, candidates: SliceCandidates, budget: float, what: str, proportion: float
) -> SerialChoice:
    """The fastest plan whose temporaries per tile fit ``budget``, over serial slice counts
    of a dimension of ``size`` (fewest slices first); else the one needing least memory,
    with a warning naming ``what`` (the op and its shapes) and its ``proportion``.

    ``candidates(slice_size)`` gives one slice's parallel splits: their columns, cycles
    and temporary bytes per tile.
    """
    best: SerialChoice | None = None
    smallest: SerialChoice | None = None
    tried_after_fit = 0
    for serial in _serial_counts(size):
        slice_size = -(-size // serial)
        split, slice_cycles, temp = candidates(slice_size)
        cycles = slice_cycles * serial + (serial - 1) * C.SYNC_CYCLES
        fits = temp <= budget
        picks = [(int(np.argmin(temp)), False)]
        if fits.any():
            picks.append((int(np.flatnonzero(fits)[np.argmin(cycles[fits])]), True))
        for i, fitting in picks:
            plan = SerialChoice(
                serial,
                slice_size,
                {name: int(column[i]) for name, column in split.items()},
                float(cycles[i]),
                int(temp[i]),
                bool(fits[i]),
            )
            if fitting and (best is None or plan.cycles < best.cycles):
                best = plan
            if smallest is None or plan.temp_bytes < smallest.temp_bytes:
                smallest = plan
        if best is not None:
            tried_after_fit += 1
            if tried_after_fit > SERIAL_AFTER_FIT:
                break
    assert smallest is not None
    if best is None:
        log.warning(
            "%s: no plan keeps to the memory budget of %.0f bytes per tile "
            "(availableMemoryProportion %.2f), even in %d serial slices; using the smallest, "
            "%d bytes",
            what, budget, proportion, smallest.serial, smallest.temp_bytes,
        )  # fmt: skip
    return best or smallest


def _slice_plans(
    m: int, k: int, n: int, elem_size: int, dtype_name: str, num_tiles: int, groups: int = 1
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Every parallel split of one slice: ``groups`` products [m, k] x [k, n] (their rows
    sliced alike), the groups split into blocks too and the products of a block's groups
    run one after another on its tiles: (its blocks, cycles, temporary bytes per tile)."""
    sm_c, sn_c, sk_c = (
        split_counts(m, num_tiles),
        split_counts(n, num_tiles),
        split_counts(k, num_tiles),
    )
    grids = np.meshgrid(split_counts(groups, num_tiles), sm_c, sn_c, sk_c, indexing="ij")
    sg, sm, sn, sk = (a.reshape(-1) for a in grids)
    ok = sg * sm * sn * sk <= num_tiles
    sg, sm, sn, sk = sg[ok], sm[ok], sn[ok], sk[ok]
    bg, bm, bn, bk = -(-groups // sg), -(-m // sm), -(-n // sn), -(-k // sk)
    macs = C.MACS_PER_CYCLE.get(dtype_name, C.MACS_PER_CYCLE["float"])
    partial_size = 4  # partials accumulate in float
    compute = bg * (bm * bn * bk) / macs + bg * C.SUPERVISOR_OVERHEAD_CYCLES
    operand_bytes = bg * (bm * bk + bk * bn) * elem_size
    exchange = operand_bytes / C.EXCHANGE_BYTES_PER_CYCLE + C.EXCHANGE_LATENCY_CYCLES
    reduce_elems = np.where(sk > 1, bg * bm * bn, 0)
    reduction = np.where(
        sk > 1,
        reduce_elems * partial_size / C.EXCHANGE_BYTES_PER_CYCLE
        + reduce_elems * 0.5
        + C.SYNC_CYCLES
        + C.VERTEX_OVERHEAD_CYCLES,
        0,
    )
    temp = operand_bytes + bg * bm * bn * partial_size
    split = {"sm": sm, "sn": sn, "sk": sk, "bm": bm, "bn": bn, "bk": bk, "sg": sg, "bg": bg}
    return split, compute + exchange + reduction, temp


def plan_matmul(
    m: int,
    k: int,
    n: int,
    elem_size: int,
    dtype_name: str,
    num_tiles: int,
    bytes_per_tile: int,
    available_memory_proportion: float = 0.6,
    groups: int = 1,
) -> MatMulPlan:
    """The plan of ``groups`` independent [m,k] x [k,n] products (PopLibs' matMulGrouped
    when ``groups`` > 1); serial slices cut the rows of every group alike."""
    m, k, n, elem_size, num_tiles, bytes_per_tile, groups = _counts(
        "plan_matmul", m=m, k=k, n=n, elem_size=elem_size, num_tiles=num_tiles,
        bytes_per_tile=bytes_per_tile, groups=groups,
    )  # fmt: skip
    name_arg(dtype_name, "plan_matmul: dtype_name")
    available_memory_proportion = number_arg(
        available_memory_proportion, "plan_matmul: available_memory_proportion"
    )
    budget = available_memory_proportion * bytes_per_tile
    what = f"matmul [{m},{k}]x[{k},{n}]" + ("" if groups == 1 else f" in {groups} groups")
    choice = choose_serial_plan(
        m,
        lambda rows: _slice_plans(rows, k, n, elem_size, dtype_name, num_tiles, groups),
        budget,
        what,
        available_memory_proportion,
    )
    return MatMulPlan(
        **choice.split,
        cycles=choice.cycles,
        temp_bytes=choice.temp_bytes,
        fits_budget=choice.fits_budget,
        serial=choice.serial,
        slice_rows=choice.slice_size,
    )
