"""The cycle model: cycles of every program step on every IPU.

Compute: each vertex has an estimate (``set_perf_estimate`` wins, else its codelet's
formula). A supervisor vertex's estimate is tile cycles; worker vertices are dealt whole,
in order, to the worker contexts, which the barrel issues in turn, so a tile's worker
part takes (contexts x its busiest context's cycles): 7 vertices of 9 cycles take two
rounds, 108 cycles ("including idle threads"); the sum of the vertices' cycles is the
"excluding idle threads" figure. A compute step lasts as long as its slowest tile.
Exchange: bytes over the per-tile exchange bandwidth plus a latency; across IPUs, over
the IPU-Links. Stream copies: bytes over the host link. The target's ``cycles`` settings
(``IPUModel`` attributes) and ``constants.py`` (with sources) give the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.arrays import unique_counts
from ipu_engine.poplar.compiler.codelet_group import CodeletGroup
from ipu_engine.poplar.compiler.steps import Step, StepKind
from ipu_engine.poplar.compiler.vertex_plans import ComputeSetPlan
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.cost_model.exchange import ExchangeTraffic, RearrangedTraffic
from ipu_engine.poplar.target import Target

CONTROL_STEP_CYCLES = 20
"""A Repeat, If or Call deciding where to go next (our estimate)."""


@dataclass(frozen=True)
class ComputeSetCycles:
    """Cycles of one compute set: per tile that has vertices, and per vertex."""

    tiles: np.ndarray  # int32 tiles with vertices
    cycles: np.ndarray  # int64 compute cycles of each of those tiles, incl. idle threads
    busy: np.ndarray  # int64 the same excluding idle threads: the vertices' own cycles
    flops_by_group: list[np.ndarray]  # per codelet group, FLOPs of each vertex


def vertex_cycles(group: CodeletGroup) -> np.ndarray:
    """Estimated cycles of every vertex of a codelet group; user estimates win."""
    estimate = np.asarray(group.codelet.estimate_cycles(group.sizes()), dtype=np.float64)
    estimate = np.broadcast_to(estimate, (group.count,)).copy()
    given = group.perf_estimate >= 0
    estimate[given] = group.perf_estimate[given]
    return np.ceil(estimate).astype(np.int64)


def compute_set_cycles(
    plan: ComputeSetPlan, num_tiles: int, contexts: int = C.WORKER_CONTEXTS
) -> ComputeSetCycles:
    supervisor = np.zeros(num_tiles, dtype=np.int64)
    worker_tiles, worker_cycles = [], []
    flops = []
    for group in plan.groups:
        cycles = vertex_cycles(group)
        tiles = group.tiles.astype(np.int64)
        if group.codelet.supervisor:
            supervisor += np.bincount(tiles, weights=cycles, minlength=num_tiles).astype(np.int64)
        else:
            worker_tiles.append(tiles)
            worker_cycles.append(cycles)
        flops.append(np.asarray(group.codelet.flops(group.sizes()), dtype=np.int64))
    busiest, worker_sum = np.zeros(num_tiles, np.int64), np.zeros(num_tiles, np.int64)
    if worker_tiles:
        busiest, worker_sum = deal_to_workers(
            np.concatenate(worker_tiles), np.concatenate(worker_cycles), num_tiles, contexts
        )
    per_tile = supervisor + busiest * contexts
    tiles = np.flatnonzero(per_tile).astype(np.int32)
    return ComputeSetCycles(tiles, per_tile[tiles], (supervisor + worker_sum)[tiles], flops)


def deal_to_workers(
    tiles: np.ndarray, cycles: np.ndarray, num_tiles: int, contexts: int
) -> tuple[np.ndarray, np.ndarray]:
    """Deal each tile's vertices, in order, to its worker contexts (the k-th to context
    k mod ``contexts``): (busiest context's cycles, all contexts' cycles) per tile."""
    order = np.argsort(tiles, kind="stable")
    tiles, cycles = tiles[order], cycles[order]
    first = np.searchsorted(tiles, tiles, side="left")
    context = (np.arange(tiles.size) - first) % contexts
    per_context = np.bincount(
        tiles * contexts + context, weights=cycles, minlength=num_tiles * contexts
    ).astype(np.int64)
    per_context = per_context.reshape(num_tiles, contexts)
    return per_context.max(axis=1), per_context.sum(axis=1)


def _per_ipu_max(target: Target, tiles: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.zeros(target.num_ipus, dtype=np.int64)
    if tiles.size:
        np.maximum.at(out, tiles.astype(np.int64) // target.tiles_per_ipu, values.astype(np.int64))
    return out


def exchange_cycles(target: Target, traffic: ExchangeTraffic, cross_ipu: bool) -> np.ndarray:
    busiest = np.maximum(traffic.bytes_in, traffic.bytes_out)
    if not cross_ipu:
        rate = float(target.exchange_bytes_per_cycle)
        if isinstance(traffic, RearrangedTraffic):
            rate *= C.REARRANGE_EXCHANGE_EFFICIENCY
        per_ipu = _per_ipu_max(target, traffic.tiles, np.ceil(busiest / rate).astype(np.int64))
        return np.where(per_ipu > 0, per_ipu + C.EXCHANGE_LATENCY_CYCLES, 0)
    ipu = traffic.tiles.astype(np.int64) // target.tiles_per_ipu
    link_bytes = np.bincount(ipu, weights=busiest, minlength=target.num_ipus)
    per_ipu = -(-link_bytes.astype(np.int64) // C.IPU_LINK_BYTES_PER_CYCLE)
    return np.where(per_ipu > 0, per_ipu + C.GLOBAL_EXCHANGE_LATENCY_CYCLES, 0)


def host_copy_cycles(target: Target, tiles: np.ndarray, elem_size: int) -> np.ndarray:
    """A stream copy's data phase: the bytes of each IPU over the host link."""
    return np.ceil(_ipu_bytes(target, tiles, elem_size) / host_bytes_per_cycle(target)).astype(
        np.int64
    )


def host_bytes_per_cycle(target: Target) -> float:
    return target.cycles.host_bytes_per_second / target.clock_hz


def _ipu_bytes(target: Target, tiles: np.ndarray, elem_size: int) -> np.ndarray:
    ipu = tiles.astype(np.int64) // target.tiles_per_ipu
    return np.bincount(ipu, minlength=target.num_ipus) * elem_size


def stream_begin_cycles(target: Target, tiles: np.ndarray, elem_size: int) -> np.ndarray:
    """StreamCopyBegin: DMA set-up, and on hardware the host preparing the bytes."""
    per_byte = C.HOST_PREPARE_CYCLES_PER_BYTE[target.cycles.profile]
    prepare = np.ceil(_ipu_bytes(target, tiles, elem_size) * per_byte).astype(np.int64)
    return C.STREAM_COPY_LATENCY_CYCLES + prepare


def sync_cycles(target: Target, kind: str) -> int:
    """One sync: "global" across IPUs, "host" before a stream copy, else on-IPU."""
    if kind == "global":
        return C.GLOBAL_SYNC_CYCLES + target.cycles.sync_delay_cycles
    if kind == "host":
        return C.HOST_SYNC_CYCLES[target.cycles.profile] + target.cycles.sync_delay_cycles
    return C.SYNC_CYCLES + target.cycles.sync_delay_cycles


def step_cycles(
    target: Target,
    steps: list[Step],
    cs_cycles: dict[int, ComputeSetCycles],
) -> np.ndarray:
    """Cycles of each step on each IPU, shape (steps, IPUs); 0 where an IPU is idle."""
    out = np.zeros((len(steps), target.num_ipus), dtype=np.int64)
    every_ipu = np.ones(target.num_ipus, dtype=np.int64)
    for step in steps:
        kind, facts = step.kind, step.facts
        if kind is StepKind.ON_TILE_EXECUTE and step.compute_set >= 0:
            c = cs_cycles[step.compute_set]
            out[step.id] = _per_ipu_max(target, c.tiles, c.cycles)
        elif kind is StepKind.ON_TILE_EXECUTE:  # an on-tile copy: 8 bytes a cycle per tile
            tiles, counts = unique_counts(facts["copy_tiles"])
            cycles = C.VERTEX_OVERHEAD_CYCLES + -(-counts * facts["copy_bytes"] // 8)
            out[step.id] = _per_ipu_max(target, tiles, cycles)
        elif kind in (StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE):
            out[step.id] = exchange_cycles(
                target, facts["traffic"], kind is StepKind.GLOBAL_EXCHANGE
            )
        elif kind is StepKind.SYNC:
            cost = sync_cycles(target, "global" if facts.get("global") else "")
            if facts.get("host"):  # before a stream copy: may wait for the host too
                cost = max(cost, sync_cycles(target, "host"))
            out[step.id] = every_ipu * cost
        elif kind is StepKind.STREAM_COPY_BEGIN:
            out[step.id] = stream_begin_cycles(target, facts["tiles"], facts["elem_size"])
        elif kind is StepKind.STREAM_COPY_MID:
            out[step.id] = host_copy_cycles(target, facts["tiles"], facts["elem_size"])
        elif kind is StepKind.STREAM_COPY_END:
            out[step.id] = every_ipu * sync_cycles(target, "")
        elif kind is StepKind.PRINT_TENSOR:
            copy = host_copy_cycles(target, facts["tiles"], facts["elem_size"])
            out[step.id] = copy + C.STREAM_COPY_LATENCY_CYCLES
        elif kind.is_control:
            out[step.id] = every_ipu * CONTROL_STEP_CYCLES
    return out
