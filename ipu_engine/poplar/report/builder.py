"""Building the report model (profiler_core.model.profile) from a compiled engine.

Everything is gathered as numpy columns; names go into one string table. This module
only builds data; ``autoreport`` decides when and where it is written.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from ipu_engine.common.version import __version__
from ipu_engine.poplar.compiler.executable import Executable
from ipu_engine.poplar.cost_model.compile_model import CompileModel
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.options import EngineOptions
from profiler_core.model.kinds import ELEMENT_TYPES, ProgramKind
from profiler_core.model.profile import (
    FORMAT_MAJOR,
    FORMAT_MINOR,
    DebugData,
    ExecutionData,
    GraphData,
    Header,
    LivenessData,
    MemoryData,
    ProfileData,
    ProgramData,
    RunData,
    TargetInfo,
)
from profiler_core.model.strings import StringInterner

PRODUCER = "ipu_engine"
TARGET_TYPE = "IPU Model"  # the engine simulates Poplar's IPU Model; hardware would be "IPU"


def instrumentation_level(options: EngineOptions) -> str:
    """What the engine instrumented, in words: which cycle counters the program carries."""
    if not options.instrument:
        return "off"
    parts = [
        label
        for key, label in (
            ("debug.instrumentCompute", "compute"),
            ("debug.instrumentExternalExchange", "external exchange"),
            ("debug.instrumentControlFlow", "control flow"),
        )
        if options.values.get(key) is not False  # unset follows debug.instrument
    ]
    why = "execution profile" if options.output("ExecutionProfile") else "debug.instrument"
    return f"{', '.join(parts) or 'none'} (for the {why})"


def new_report_id() -> str:
    return uuid.uuid4().hex


def build_profile(
    graph: Graph,
    exe: Executable,
    model: CompileModel,
    options: EngineOptions,
    program_name: str,
    report_id: str,
    runs: Sequence[RunData] | None,
    out_of_memory: bool,
    framework: dict[str, str] | None = None,
    replication_factor: int = 1,
) -> ProfileData:
    strings = StringInterner()
    t = graph.target
    header = Header(
        FORMAT_MAJOR,
        FORMAT_MINOR,
        PRODUCER,
        __version__,
        program_name,
        time.time(),
        report_id,
        {k: str(v) for k, v in options.values.items() if v is not None},
        out_of_memory,
        dict(framework or {}),
        instrumentation_level(options),
    )
    target = TargetInfo(
        t.version,
        t.num_ipus,
        t.tiles_per_ipu,
        t.bytes_per_tile,
        t.clock_hz,
        type=TARGET_TYPE,
        replicas=replication_factor,
        ipus_per_replica=t.num_ipus // replication_factor,
    )
    programs = _programs(exe, model, strings)
    liveness = LivenessData(
        model.always_live_bytes,
        model.live_bytes,
        *_intervals(model),
    )
    columns = _graph_columns(graph, model, strings)
    graph_data = GraphData(strings=strings.table(), **columns)  # every name is in now
    memory = MemoryData(model.memory.by_category, model.memory.interleaved)
    execution = ExecutionData(list(runs)) if runs else None
    return ProfileData(header, target, graph_data, memory, programs, liveness, execution)


def _num_edges(graph: Graph) -> int:
    """Every vertex's edges: one per scalar or vector field, one per inner vector of a
    vector of edges (each column's offsets bound its edges)."""
    return int(
        sum(len(col.offsets) - 1 for block in graph.vertex_blocks for col in block.edges.values())
    )


def _intervals(model: CompileModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nal = np.flatnonzero(~model.liveness.always_live)
    return (
        nal.astype(np.int32),
        model.liveness.first[nal].astype(np.int32),
        model.liveness.last[nal].astype(np.int32),
    )


def _graph_columns(graph: Graph, model: CompileModel, strings: StringInterner) -> dict[str, Any]:
    variables = graph.variables
    type_code = {name: i for i, name in enumerate(ELEMENT_TYPES)}
    shapes = [v.shape for v in variables]
    shape_sizes = np.array([len(s) for s in shapes], dtype=np.int64)
    counts = model.vertex_counts
    return dict(
        var_name=strings.many(v.name for v in variables),
        var_type=np.array([type_code[v.type.name] for v in variables], dtype=np.uint8),
        var_elements=np.array([v.size for v in variables], dtype=np.int64),
        var_bytes=model.var_bytes,
        var_is_constant=np.array([v.is_constant for v in variables], dtype=bool),
        var_always_live=model.liveness.always_live.copy(),
        var_debug=np.array([v.debug_id for v in variables], dtype=np.int32),
        var_shape_offsets=np.concatenate(([0], np.cumsum(shape_sizes))).astype(np.int64),
        var_shape_dims=np.array([d for s in shapes for d in s], dtype=np.int64),
        region_var=model.regions.var,
        region_tile=model.regions.tile,
        region_start=model.regions.start,
        region_elements=model.regions.elements,
        cs_name=strings.many(cs.name for cs in graph.compute_sets),
        cs_debug=np.array([cs.debug_id for cs in graph.compute_sets], dtype=np.int32),
        vt_name=strings.many(t.type_name for t in counts.types),
        vt_code_bytes=np.array([t.code_bytes for t in counts.types], dtype=np.int32),
        vt_supervisor=np.array([t.supervisor for t in counts.types], dtype=bool),
        vt_state_bytes=np.array([t.state_bytes() for t in counts.types], dtype=np.int64),
        num_edges=_num_edges(graph),
        vc_cs=counts.cs,
        vc_type=counts.type,
        vc_tile=counts.tile,
        vc_count=counts.count,
        vc_flops=model.vertex_flops,
        vc_debug=counts.debug,
    )


def _programs(exe: Executable, model: CompileModel, strings: StringInterner) -> ProgramData:
    low = exe.lowering
    nodes = low.nodes
    steps = exe.steps
    exch_step, exch_tile, exch_in, exch_out, global_bytes = (
        [],
        [],
        [],
        [],
        np.zeros(len(steps), np.int64),
    )
    for step in steps:
        traffic = step.facts.get("traffic")
        if traffic is None:
            continue
        exch_step.append(np.full(traffic.tiles.size, step.id, dtype=np.int32))
        exch_tile.append(traffic.tiles)
        exch_in.append(traffic.bytes_in)
        exch_out.append(traffic.bytes_out)
        if step.kind.poplar_name == "GlobalExchange":
            global_bytes[step.id] = traffic.total_bytes
    cst_cs, cst_tile, cst_cycles = [], [], []
    # excluding idle threads, summed over each compute set's tiles: one number per compute
    # set is all Poplar's tile-average figure needs, and keeps the file small
    cs_busy = np.zeros(len(exe.graph.compute_sets), dtype=np.int64)
    for cs, c in sorted(model.cs_cycles.items()):
        cst_cs.append(np.full(c.tiles.size, cs, dtype=np.int32))
        cst_tile.append(c.tiles)
        cst_cycles.append(c.cycles)
        cs_busy[cs] = int(c.busy.sum())

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    return ProgramData(
        node_kind=np.array([ProgramKind[n.kind] for n in nodes], dtype=np.uint8),
        node_name=strings.many(n.name for n in nodes),
        node_parent=np.array([n.parent for n in nodes], dtype=np.int32),
        node_step=np.array([n.first_step for n in nodes], dtype=np.int32),
        node_count=np.array([n.count for n in nodes], dtype=np.int64),
        node_debug=np.array([n.debug_id for n in nodes], dtype=np.int32),
        node_function=np.array([n.function for n in nodes], dtype=np.int32),
        roots=np.array(low.root_nodes, dtype=np.int32),
        step_kind=np.array([int(s.kind) for s in steps], dtype=np.uint8),
        step_name=strings.many(s.name for s in steps),
        step_cs=np.array([s.compute_set for s in steps], dtype=np.int32),
        step_debug=np.array([s.debug_id for s in steps], dtype=np.int32),
        step_node=np.array([s.facts.get("node", -1) for s in steps], dtype=np.int32),
        step_cycles=model.step_cycles,
        step_global_bytes=global_bytes,
        exch_step=cat(exch_step, np.int32),
        exch_tile=cat(exch_tile, np.int32),
        exch_bytes_in=cat(exch_in, np.int64),
        exch_bytes_out=cat(exch_out, np.int64),
        cst_cs=cat(cst_cs, np.int32),
        cst_tile=cat(cst_tile, np.int32),
        cst_cycles=cat(cst_cycles, np.int32),
        cs_busy_cycles=cs_busy,
    )


def build_run(model: CompileModel, program: int, name: str, executed: np.ndarray) -> RunData:
    """A run's executed steps with start cycles: IPUs move from step to step together."""
    durations = model.step_duration[executed] if executed.size else np.zeros(0, np.int64)
    ends = np.cumsum(durations)
    starts = ends - durations
    total = int(ends[-1]) if ends.size else 0
    return RunData(program, name, executed.astype(np.int32), starts.astype(np.int64), total)


def build_debug(graph: Graph, report_id: str) -> DebugData:
    items = graph.debug.items
    return DebugData(
        report_id=report_id,
        name=[d.name for d in items],
        parent=np.array([d.parent for d in items], dtype=np.int32),
        layer=[d.layer for d in items],
        op=[d.op for d in items],
        api=[d.api for d in items],
        file=[d.location[0] for d in items],
        line=np.array([d.location[1] for d in items], dtype=np.int32),
        args=[dict(d.args) for d in items],
    )
