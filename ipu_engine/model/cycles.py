"""The cycle model: cycles of every program step on every IPU.

Compute: each vertex has an estimate (``set_perf_estimate`` wins, else its codelet's
formula). A supervisor vertex's estimate is tile cycles; worker vertices share the six
worker contexts, which the barrel issues in turn, so a tile's worker part takes six
times its busiest worker's cycles (we bound that by ``max(longest vertex, total / 6)``).
A compute step lasts as long as its slowest tile. Exchange: bytes over the per-tile
exchange bandwidth plus a latency; across IPUs, over the IPU-Links. Stream copies: bytes
over the host link. Constants and their sources are in ``constants.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.arrays import unique_counts
from ipu_engine.compiler.steps import Step, StepKind
from ipu_engine.compiler.vertex_plans import CodeletGroup, ComputeSetPlan
from ipu_engine.model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.model.exchange import ExchangeTraffic
from ipu_engine.target import Target

CONTROL_STEP_CYCLES = 20
"""A Repeat, If or Call deciding where to go next (our estimate)."""


@dataclass(frozen=True)
class ComputeSetCycles:
    """Cycles of one compute set: per tile that has vertices, and per vertex."""

    tiles: np.ndarray  # int32 tiles with vertices
    cycles: np.ndarray  # int64 compute cycles of each of those tiles
    flops_by_group: list[np.ndarray]  # per codelet group, FLOPs of each vertex


def vertex_cycles(group: CodeletGroup) -> np.ndarray:
    """Estimated cycles of every vertex of a codelet group; user estimates win."""
    estimate = np.asarray(group.codelet.estimate_cycles(group.sizes()), dtype=np.float64)
    estimate = np.broadcast_to(estimate, (group.count,)).copy()
    given = group.perf_estimate >= 0
    estimate[given] = group.perf_estimate[given]
    return np.ceil(estimate).astype(np.int64)


def compute_set_cycles(plan: ComputeSetPlan, num_tiles: int) -> ComputeSetCycles:
    supervisor = np.zeros(num_tiles, dtype=np.int64)
    worker_total = np.zeros(num_tiles, dtype=np.int64)
    worker_longest = np.zeros(num_tiles, dtype=np.int64)
    flops = []
    for group in plan.groups:
        cycles = vertex_cycles(group)
        tiles = group.tiles.astype(np.int64)
        summed = np.bincount(tiles, weights=cycles, minlength=num_tiles).astype(np.int64)
        if group.codelet.supervisor:
            supervisor += summed
        else:
            worker_total += summed
            np.maximum.at(worker_longest, tiles, cycles)
        flops.append(np.asarray(group.codelet.flops(group.sizes()), dtype=np.int64))
    workers = np.maximum(worker_longest, -(-worker_total // C.WORKER_CONTEXTS)) * C.WORKER_CONTEXTS
    per_tile = supervisor + workers
    tiles = np.flatnonzero(per_tile).astype(np.int32)
    return ComputeSetCycles(tiles, per_tile[tiles], flops)


def _per_ipu_max(target: Target, tiles: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.zeros(target.num_ipus, dtype=np.int64)
    if tiles.size:
        np.maximum.at(out, tiles.astype(np.int64) // target.tiles_per_ipu, values.astype(np.int64))
    return out


def exchange_cycles(target: Target, traffic: ExchangeTraffic, cross_ipu: bool) -> np.ndarray:
    busiest = np.maximum(traffic.bytes_in, traffic.bytes_out)
    if not cross_ipu:
        per_ipu = _per_ipu_max(target, traffic.tiles, -(-busiest // C.EXCHANGE_BYTES_PER_CYCLE))
        return np.where(per_ipu > 0, per_ipu + C.EXCHANGE_LATENCY_CYCLES, 0)
    ipu = traffic.tiles.astype(np.int64) // target.tiles_per_ipu
    link_bytes = np.bincount(ipu, weights=busiest, minlength=target.num_ipus)
    per_ipu = -(-link_bytes.astype(np.int64) // C.IPU_LINK_BYTES_PER_CYCLE)
    return np.where(per_ipu > 0, per_ipu + C.GLOBAL_EXCHANGE_LATENCY_CYCLES, 0)


def host_copy_cycles(target: Target, tiles: np.ndarray, elem_size: int) -> np.ndarray:
    """A stream copy's data phase: the bytes of each IPU over the host link."""
    bytes_per_cycle = C.HOST_BYTES_PER_SECOND / target.clock_hz
    ipu = tiles.astype(np.int64) // target.tiles_per_ipu
    ipu_bytes = np.bincount(ipu, minlength=target.num_ipus) * elem_size
    return np.ceil(ipu_bytes / bytes_per_cycle).astype(np.int64)


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
            cost = C.GLOBAL_SYNC_CYCLES if facts.get("global") else C.SYNC_CYCLES
            out[step.id] = every_ipu * cost
        elif kind is StepKind.STREAM_COPY_BEGIN:
            out[step.id] = every_ipu * C.STREAM_COPY_LATENCY_CYCLES
        elif kind is StepKind.STREAM_COPY_MID:
            out[step.id] = host_copy_cycles(target, facts["tiles"], facts["elem_size"])
        elif kind is StepKind.STREAM_COPY_END:
            out[step.id] = every_ipu * C.SYNC_CYCLES
        elif kind is StepKind.PRINT_TENSOR:
            copy = host_copy_cycles(target, facts["tiles"], facts["elem_size"])
            out[step.id] = copy + C.STREAM_COPY_LATENCY_CYCLES
        elif kind.is_control:
            out[step.id] = every_ipu * CONTROL_STEP_CYCLES
    return out
