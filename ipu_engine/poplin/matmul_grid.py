"""Where a matmul plan puts its block products: each vertex's block bounds and tile.

``mat_mul`` builds its vertices on this grid and ``create_mat_mul_input_rhs`` maps a right
operand on it, so a weight created for a plan sits on the tiles of the vertices that read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.poplin.planner import MatMulPlan


@dataclass(frozen=True)
class VertexGrid:
    """One vertex per (group, row block, column block, depth block), in that order: its
    group ``g``, rows ``r0:r1`` of the stacked [G*M, K] operand, columns ``c0:c1``, depth
    ``k0:k1`` (block ``d``) and ``tiles``; ``depth`` blocks of K per output block."""

    g: np.ndarray
    r0: np.ndarray
    r1: np.ndarray
    c0: np.ndarray
    c1: np.ndarray
    k0: np.ndarray
    k1: np.ndarray
    d: np.ndarray
    tiles: np.ndarray
    depth: int


def _bounds(size: int, block: int) -> np.ndarray:
    starts = np.arange(0, size, block, dtype=np.int64)
    return np.stack([starts, np.minimum(starts + block, size)], axis=1)


def vertex_grid(plan: MatMulPlan, m: int, k: int, n: int, groups: int, tiles: range) -> VertexGrid:
    """The vertices of ``plan`` for ``groups`` products [m, k] x [k, n] (one serial slice's
    rows), spread evenly over ``tiles``; the groups of one group block share a slot's tile."""
    rows, cols, depth = _bounds(m, plan.bm), _bounds(n, plan.bn), _bounds(k, plan.bk)
    per_group = len(rows) * len(cols) * len(depth)
    count = groups * per_group
    index = np.stack(
        np.meshgrid(
            np.arange(groups), np.arange(len(rows)), np.arange(len(cols)),
            np.arange(len(depth)), indexing="ij",
        ),
        axis=-1,
    ).reshape(-1, 4)  # fmt: skip
    g = index[:, 0].astype(np.int64)
    slot = (g // plan.bg) * per_group + np.arange(count) % per_group
    slots = -(-groups // plan.bg) * per_group
    return VertexGrid(
        g=g,
        r0=rows[index[:, 1], 0] + g * m,
        r1=rows[index[:, 1], 1] + g * m,
        c0=cols[index[:, 2], 0],
        c1=cols[index[:, 2], 1],
        k0=depth[index[:, 3], 0],
        k1=depth[index[:, 3], 1],
        d=index[:, 3].astype(np.int64),
        tiles=(tiles.start + (slot * len(tiles)) // slots).astype(np.int32),
        depth=len(depth),
    )
