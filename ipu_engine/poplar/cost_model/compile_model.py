"""The compile model of one engine: liveness, memory per tile by category, cycles of
every program step, and the out-of-memory check -- the facts a compile profile reports."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from ipu_engine.common.errors import OutOfMemoryError
from ipu_engine.poplar.compiler.executable import Executable
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.cost_model.cycles import ComputeSetCycles, compute_set_cycles, step_cycles
from ipu_engine.poplar.cost_model.liveness import (
    Liveness,
    analyse_liveness,
    live_bytes_per_step,
    peak_per_tile,
)
from ipu_engine.poplar.cost_model.memory import (
    TileMemory,
    VariableRegions,
    aligned,
    data_categories,
    region_gaps,
)
from ipu_engine.poplar.cost_model.program_memory import program_memory
from ipu_engine.poplar.cost_model.regions import variable_regions, variable_tile_bytes
from ipu_engine.poplar.cost_model.vertex_memory import VertexCounts, block_owner, vertex_memory
from ipu_engine.poplar.graph import Graph, variables_of
from profiler_core.model.kinds import MemoryCategory as M

log = logging.getLogger("poplar")


@dataclass
class CompileModel:
    regions: VariableRegions
    var_bytes: np.ndarray
    liveness: Liveness
    memory: TileMemory
    step_cycles: np.ndarray  # (steps, IPUs)
    cs_cycles: dict[int, ComputeSetCycles]
    vertex_counts: VertexCounts
    vertex_flops: np.ndarray  # FLOPs per execution of each vertex_counts row
    live_bytes: np.ndarray  # (steps,) not-always-live bytes
    always_live_bytes: int
    bytes_per_tile: int

    @property
    def tiles_over(self) -> np.ndarray:
        return np.flatnonzero(self.memory.total > self.bytes_per_tile)

    @property
    def step_duration(self) -> np.ndarray:
        """Cycles each step takes: IPUs step together, so the slowest IPU's."""
        return self.step_cycles.max(axis=1) if self.step_cycles.size else np.zeros(0, np.int64)

    def out_of_memory_message(self, detail: bool = True) -> str:
        """Poplar's message for the first tile over; ``detail`` adds how many tiles are
        over, the fullest one and how to get a report anyway."""
        over = self.tiles_over
        tile = int(over[0])
        used = int(self.memory.total[tile])
        message = (
            f"Out of memory on tile {tile}: {used} bytes used but tiles only have "
            f"{self.bytes_per_tile} bytes of memory"
        )
        if not detail:
            return message
        if over.size > 1:
            worst = int(over[np.argmax(self.memory.total[over])])
            message += (
                f" ({over.size} tiles are over; the fullest is tile {worst} with "
                f"{int(self.memory.total[worst])} bytes)"
            )
        hint = '"debug.allowOutOfMemory": "true"'
        return f"{message}. Set the engine option {hint} to get a report of the layout."


def _host_variables(graph: Graph) -> np.ndarray:
    touched = np.zeros(len(graph.variables), dtype=bool)
    for t in (*graph.host_writes.values(), *graph.host_reads.values()):
        touched[variables_of(graph, t)] = True
    return np.flatnonzero(touched)


def build_compile_model(graph: Graph, exe: Executable, instrumented: bool) -> CompileModel:
    t0 = time.perf_counter()
    target = graph.target
    num_tiles = target.num_tiles
    low = exe.lowering
    log.debug(
        "PO: graph for %s: %d variables, %d compute sets, %d vertices, %d program steps",
        target.describe(), len(graph.variables), len(graph.compute_sets),
        graph.num_vertices, len(exe.steps),
    )  # fmt: skip
    cs_cycles = {
        cs: compute_set_cycles(plan, num_tiles, target.num_worker_contexts)
        for cs, plan in exe.plans.items()
    }
    cycles = step_cycles(target, exe.steps, cs_cycles)
    t1 = time.perf_counter()
    log.info("PO: cycle model: %d program steps in %.3f s", len(exe.steps), t1 - t0)

    variables = graph.variables
    is_constant = np.array([v.is_constant for v in variables], dtype=bool)
    var_bytes = np.array([v.size * v.type.size for v in variables], dtype=np.int64)
    program_spans = _program_spans(low.root_nodes, low.nodes, len(exe.steps))
    shared = [low.function_spans[f] for f, n in low.call_counts.items() if n > 1]
    liveness = analyse_liveness(
        len(variables),
        exe.steps,
        is_constant,
        _host_variables(graph),
        low.loop_spans,
        program_spans,
        shared,
    )
    live_bytes = live_bytes_per_step(liveness, var_bytes, len(exe.steps))
    always_live_bytes = int(var_bytes[liveness.always_live].sum())
    t2 = time.perf_counter()
    log.info("PO: liveness analysis: %d variables in %.3f s", len(variables), t2 - t1)

    regions = variable_regions(graph)
    element_size = np.array([v.type.size for v in variables], dtype=np.int64)
    shares = variable_tile_bytes(regions, element_size, num_tiles)
    nal_peak = peak_per_tile(liveness, shares.var, shares.tile, shares.bytes, num_tiles)
    data = data_categories(shares, is_constant, liveness.always_live, nal_peak, num_tiles)
    del shares
    vmem = vertex_memory(graph)
    categories = {
        **data,
        M.VERTEX_CODE: vmem.code,
        M.VERTEX_STATE: vmem.state,
        M.VERTEX_DESCRIPTORS: vmem.descriptors,
        M.STACK: vmem.stack,
        **program_memory(exe.steps, cs_cycles, num_tiles, instrumented),
    }
    categories[M.EXCHANGE_BUFFERS] = categories[M.EXCHANGE_BUFFERS] + _receive_buffers(
        low.cs_facts, num_tiles
    )
    data_total = sum(data[c] for c in data) + categories[M.EXCHANGE_BUFFERS]
    interleaved_bytes = C.INTERLEAVED_BYTES.get(target.version, target.bytes_per_tile)
    gaps, interleaved = region_gaps(
        regions, element_size, liveness.always_live, nal_peak, data_total, interleaved_bytes
    )
    categories[M.REGION_GAPS] = gaps
    by_category = np.zeros((len(M), num_tiles), dtype=np.int64)
    for category, values in categories.items():
        by_category[category] = values
    t3 = time.perf_counter()
    log.info("PO: memory layout: %d tiles in %.3f s", num_tiles, t3 - t2)
    if log.isEnabledFor(5):
        for tile in range(num_tiles):
            log.log(5, "PO: tile %d: %d bytes", tile, int(by_category[:, tile].sum()))
    return CompileModel(
        regions,
        var_bytes,
        liveness,
        TileMemory(by_category, interleaved),
        cycles,
        cs_cycles,
        vmem.counts,
        _vertex_flops(exe, cs_cycles, vmem.counts, num_tiles),
        live_bytes,
        always_live_bytes,
        target.bytes_per_tile,
    )


def _receive_buffers(cs_facts: dict, num_tiles: int) -> np.ndarray:
    """Per tile, the most exchanged data held at once: a compute set's remote inputs land
    in a buffer before it runs, and its remote outputs wait in one until sent."""
    peak = np.zeros(num_tiles, dtype=np.int64)
    for facts in cs_facts.values():
        held = np.zeros(num_tiles, dtype=np.int64)
        for traffic in (facts.pre.on_ipu, facts.pre.cross_ipu):
            held[traffic.tiles] += aligned(traffic.bytes_in)
        for traffic in (facts.post.on_ipu, facts.post.cross_ipu):
            held[traffic.tiles] += aligned(traffic.bytes_out)
        np.maximum(peak, held, out=peak)
    return peak


def _program_spans(root_nodes: list[int], nodes: list, num_steps: int) -> list[tuple[int, int]]:
    """The step range of each engine program (its steps are lowered contiguously)."""
    starts = [nodes[r].first_step if r < len(nodes) else -1 for r in root_nodes]
    spans = []
    for i, start in enumerate(starts):
        later = [s for s in starts[i + 1 :] if s >= 0]
        end = (later[0] - 1) if later else num_steps - 1
        spans.append((start, end) if start >= 0 else (0, -1))
    return spans


def _vertex_flops(
    exe: Executable, cs_cycles: dict[int, ComputeSetCycles], counts: VertexCounts, num_tiles: int
) -> np.ndarray:
    """FLOPs per execution of each (compute set, vertex type, tile, debug context) row of
    ``counts``."""
    type_index = {t.type_name: i for i, t in enumerate(counts.types)}
    num_types = max(len(counts.types), 1)
    contexts = np.unique(counts.debug)  # a dense rank keeps the packed keys small
    place = (counts.cs.astype(np.int64) * num_types + counts.type) * num_tiles + counts.tile
    row_keys = place * len(contexts) + np.searchsorted(contexts, counts.debug)
    blocks = exe.graph.vertex_blocks
    block_first = np.array([b.first_id for b in blocks], dtype=np.int64)
    block_context = np.array([block_owner(exe.graph, b) for b in blocks], dtype=np.int64)
    flops = np.zeros(row_keys.size, dtype=np.int64)
    for cs, plan in exe.plans.items():
        for group, per_vertex in zip(plan.groups, cs_cycles[cs].flops_by_group, strict=True):
            if not per_vertex.any():
                continue
            block = np.searchsorted(block_first, group.first_ids, side="right") - 1
            context = np.searchsorted(contexts, block_context[block])
            keys = (
                cs * num_types + type_index[group.codelet.type_name]
            ) * num_tiles + group.tiles.astype(np.int64)
            np.add.at(flops, np.searchsorted(row_keys, keys * len(contexts) + context), per_vertex)
    return flops


def check_memory(model: CompileModel, allow_out_of_memory: bool) -> None:
    """Poplar's out-of-memory error, or a warning when the option lets it through."""
    if model.tiles_over.size == 0:
        return
    if not allow_out_of_memory:
        raise OutOfMemoryError(model.out_of_memory_message())
    log.warning(
        "PO: %s; continuing because debug.allowOutOfMemory is set",
        model.out_of_memory_message(detail=False),
    )
