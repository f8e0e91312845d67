"""What each program step reads, writes and moves: variables touched and exchange plans.

These facts drive liveness (which variables are live at each step) and the exchange
steps lowering emits around compute sets and copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.arrays import unique
from ipu_engine.compiler.vertex_plans import ComputeSetPlan
from ipu_engine.graph import Graph
from ipu_engine.model.exchange import ExchangePlan, Transfer, plan_exchange
from ipu_engine.tensor import Tensor


@dataclass(frozen=True)
class ComputeSetFacts:
    """A compute set's variables read and written, and its pre/post exchanges."""

    reads: np.ndarray  # variable ids
    writes: np.ndarray
    pre: ExchangePlan
    post: ExchangePlan


def variables_of(graph: Graph, tensor: Tensor) -> np.ndarray:
    return graph.pool(tensor.type).variables_touched(tensor.flat_addr())


def compute_set_facts(graph: Graph, plan: ComputeSetPlan) -> ComputeSetFacts:
    pool_ids = {t: i for i, t in enumerate(graph.pools)}
    reads, writes, pre, post = [], [], [], []
    for group in plan.groups:
        for name, f in group.fields.items():
            addr = f.column.addr
            if addr.size == 0:
                continue
            pool = graph.pool(f.type)
            var_ids = pool.variables_touched(addr)
            element_tiles = pool.tile_of.data[addr]
            vertex_tiles = group.tiles[group.element_vertex(name)]
            if f.spec.direction.reads:
                reads.append(var_ids)
                pre.append(
                    Transfer(element_tiles, vertex_tiles, addr, f.type.size, pool_ids[f.type])
                )
            if f.spec.direction.writes:
                writes.append(var_ids)
                post.append(
                    Transfer(vertex_tiles, element_tiles, addr, f.type.size, pool_ids[f.type])
                )
    return ComputeSetFacts(
        _union(reads),
        _union(writes),
        plan_exchange(graph.target, pre),
        plan_exchange(graph.target, post),
    )


def copy_exchange(graph: Graph, src: Tensor, dst: Tensor) -> ExchangePlan:
    src_addr = src.flat_addr()
    transfer = Transfer(
        graph.pool(src.type).tile_of.data[src_addr],
        graph.pool(dst.type).tile_of.data[dst.flat_addr()],
        src_addr,
        src.type.size,
        list(graph.pools).index(src.type),
    )
    return plan_exchange(graph.target, [transfer])


def _union(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.int64)
    return unique(np.concatenate(parts))
