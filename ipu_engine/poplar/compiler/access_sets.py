"""What each program step reads, writes and moves: variables touched and exchange plans.

These facts drive liveness (which variables are live at each step) and the exchange
steps lowering emits around compute sets and copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.common.types import Type
from ipu_engine.poplar.arrays import unique
from ipu_engine.poplar.compiler.vertex_plans import ComputeSetPlan
from ipu_engine.poplar.cost_model.exchange import ExchangePlan, Transfer, plan_exchange
from ipu_engine.poplar.cost_model.vertex_exchange import (
    ExchangeSums,
    PoolMapping,
    add_vertex_exchange,
    tile_unions,
)
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import EdgeColumn


@dataclass(frozen=True)
class ComputeSetFacts:
    """A compute set's variables read and written, and its pre/post exchanges."""

    reads: np.ndarray  # variable ids
    writes: np.ndarray
    pre: ExchangePlan
    post: ExchangePlan


def variables_of(graph: Graph, tensor: Tensor) -> np.ndarray:
    pool = graph.pool(tensor.type)
    span = tensor.pool_range()
    if span is not None:
        return pool.variables_in_runs(np.array([span[0]]), np.array([span[1] - span[0]]))
    return pool.variables_touched(tensor.flat_addr())


TileRuns = dict[Type, PoolMapping]


def tile_runs_of(graph: Graph, elem_type: Type, cache: TileRuns) -> PoolMapping:
    """The pool's tile mapping as intervals, made once per compile (``cache``)."""
    if elem_type not in cache:
        pool = graph.pool(elem_type)
        run_start, run_tile = pool.tile_runs()
        run_var = pool.tiles.runs_variables()
        cache[elem_type] = PoolMapping(
            run_start, run_tile, pool.size, run_var, pool.bases_and_ids()[1]
        )
    return cache[elem_type]


def compute_set_facts(
    graph: Graph, plan: ComputeSetPlan, tile_runs: TileRuns | None = None
) -> ComputeSetFacts:
    """Variables read and written and the exchanges of one compute set, from the runs of
    its edges unioned per vertex tile and pool (see ``vertex_exchange``): no per-element
    arrays when edges are runs."""
    cache: TileRuns = {} if tile_runs is None else tile_runs
    accessed: dict[tuple[Type, bool], list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for group in plan.groups:
        for name, f in group.fields.items():
            col = f.column
            if col.size == 0:
                continue
            runs = _vertex_tile_runs(col, group.tiles[group.edge_vertex(name)])
            for gather, wanted in (
                (True, f.spec.direction.reads),
                (False, f.spec.direction.writes),
            ):
                if wanted:
                    accessed.setdefault((f.type, gather), []).append(runs)
    pre, post = ExchangeSums(graph.target), ExchangeSums(graph.target)
    reads, writes = [], []
    for (elem_type, gather), parts in accessed.items():
        pool = graph.pool(elem_type)
        tiles, start, length = (np.concatenate(p) for p in zip(*parts, strict=True))
        unions = tile_unions(tiles, start, length, pool.size)
        mapping = tile_runs_of(graph, elem_type, cache)
        sums = pre if gather else post
        var_ids = add_vertex_exchange(sums, mapping, unions, elem_type.size, gather)
        (reads if gather else writes).append(var_ids)
    return ComputeSetFacts(_union(reads), _union(writes), pre.plan(), post.plan())


def _vertex_tile_runs(
    col: EdgeColumn, edge_tiles: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertex tile, start, length) of runs covering a field's elements; a column kept as
    addresses gives runs of the addresses that go up by one or repeat on one tile (a
    broadcast operand's repeated addresses, millions of them, are one run)."""
    if col.runs is not None:
        return np.repeat(edge_tiles, np.diff(col.run_offsets)), col.runs.start, col.runs.length
    addr = col.addr
    tiles = np.repeat(edge_tiles, np.diff(col.offsets))
    step = np.diff(addr)
    goes_on = ((step == 0) | (step == 1)) & (tiles[1:] == tiles[:-1])
    first = np.flatnonzero(np.r_[True, ~goes_on])
    last = np.r_[first[1:] - 1, addr.size - 1]
    start = addr[first].astype(np.int64)
    return tiles[first], start, addr[last] + 1 - start


def copy_exchange(graph: Graph, src: Tensor, dst: Tensor) -> ExchangePlan:
    src_addr = src.flat_addr()
    src_tiles = graph.pool(src.type).tiles.element_tiles(src_addr)
    dst_tiles = graph.pool(dst.type).tiles.element_tiles(dst.flat_addr())
    # runs of consecutive source addresses going from one tile to one tile
    if src_addr.size:
        breaks = (np.diff(src_addr) != 1) | (np.diff(src_tiles) != 0) | (np.diff(dst_tiles) != 0)
        first = np.concatenate(([0], np.flatnonzero(breaks) + 1))
    else:
        first = np.zeros(0, dtype=np.int64)
    length = np.diff(np.append(first, src_addr.size))
    transfer = Transfer(
        src_addr[first].astype(np.int64),
        length.astype(np.int64),
        src_tiles[first],
        dst_tiles[first],
        src.type.size,
        list(graph.pools).index(src.type),
    )
    return plan_exchange(graph.target, [transfer])


def _union(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.int64)
    return unique(np.concatenate(parts))
