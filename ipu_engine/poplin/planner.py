"""The matmul planner: how to split C[M,N] = A[M,K] @ B[K,N] over tiles.

A plan cuts M, N and K into ``sm x sn x sk`` blocks, one partial product per tile.
Like PopLibs' planner it picks the split with the fewest estimated cycles (compute
on the AMP, exchange of the operands, reduction of K partials) among those whose
temporary memory per tile -- the exchanged operand blocks and the partials -- stays
within ``available_memory_proportion`` of a tile (default 0.6, as Poplar). When no
split fits, it takes the one needing least memory and says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ipu_engine.model import constants as C  # noqa: N812 - reads like a formula

log = logging.getLogger("poplibs.poplin")


@dataclass(frozen=True)
class MatMulPlan:
    sm: int
    sn: int
    sk: int
    bm: int  # block rows of A and C
    bn: int  # block columns of B and C
    bk: int  # block of the shared dimension
    cycles: float
    temp_bytes: int
    fits_budget: bool
    sg: int = 1  # group blocks (a grouped matmul's G)
    bg: int = 1  # groups per block: their products share the block's tiles

    @property
    def num_partials(self) -> int:
        return self.sg * self.sm * self.sn * self.sk


def _splits(size: int, limit: int) -> np.ndarray:
    """Every split count of ``size`` that gives a distinct block size."""
    counts = np.arange(1, min(size, limit) + 1)
    blocks = -(-size // counts)
    _, first = np.unique(blocks, return_index=True)
    return counts[first]


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
    when ``groups`` > 1): the groups are split into blocks too, and the products of a
    block's groups run one after another on its tiles."""
    sm_c, sn_c, sk_c = _splits(m, num_tiles), _splits(n, num_tiles), _splits(k, num_tiles)
    sg_c = _splits(groups, num_tiles)
    grids = np.meshgrid(sg_c, sm_c, sn_c, sk_c, indexing="ij")
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
    cycles = compute + exchange + reduction
    temp = operand_bytes + bg * bm * bn * partial_size
    budget = available_memory_proportion * bytes_per_tile
    fits = temp <= budget
    if fits.any():
        choice = int(np.flatnonzero(fits)[np.argmin(cycles[fits])])
    else:
        choice = int(np.argmin(temp))
        log.warning(
            "matmul [%d,%d]x[%d,%d]: no plan keeps to the memory budget of %.0f bytes per tile "
            "(availableMemoryProportion %.2f); using the smallest, %d bytes",
            m,
            k,
            k,
            n,
            budget,
            available_memory_proportion,
            int(temp[choice]),
        )
    return MatMulPlan(
        int(sm[choice]),
        int(sn[choice]),
        int(sk[choice]),
        int(bm[choice]),
        int(bn[choice]),
        int(bk[choice]),
        float(cycles[choice]),
        int(temp[choice]),
        bool(fits[choice]),
        int(sg[choice]),
        int(bg[choice]),
    )
