"""Small, complete, self-consistent synthetic reports for tests of every profiler_core module.

``make_report(seed)`` gives a ``ProfileData`` and its ``DebugData``: by default 2 IPUs x 4
tiles, a few variables mapped in regions, compute sets with vertex counts, 10 program steps
in two engine programs, and 2 runs. Memory per tile, liveness and run cycles are derived
from the variables, vertices and step cycles by the simple rules below, so a test can
recompute any expected value from the factory's inputs.
"""

from __future__ import annotations

import numpy as np

from profiler_core.model.kinds import ELEMENT_TYPES, MemoryCategory, ProgramKind, StepKind
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

ELEMENT_SIZES = {"float": 4, "half": 2, "int": 4, "unsigned int": 4, "short": 2}
ELEMENT_SIZES |= {"unsigned short": 2, "char": 1, "unsigned char": 1, "bool": 1}
ELEMENT_SIZES |= {"long long": 8, "unsigned long long": 8}

# Per-tile costs of the factory's simple memory rules.
VERTEX_STATE_BYTES = 8  # per vertex
VERTEX_DESCRIPTOR_BYTES = 4  # per vertex
CONTROL_CODE_BYTES = 256  # per tile
STACK_BYTES = 512  # per tile
REPEAT_COUNT = 3  # the repeat node of program 0 runs its body this many times
HOST_PROGRAM_STEPS = 2  # program 1 is the first two steps (host stream copies)
STEP_PATTERN = (
    StepKind.STREAM_COPY_BEGIN,
    StepKind.STREAM_COPY_END,
    StepKind.ON_TILE_EXECUTE,
    StepKind.DO_EXCHANGE,
    StepKind.ON_TILE_EXECUTE,
    StepKind.SYNC,
    StepKind.GLOBAL_EXCHANGE,
    StepKind.ON_TILE_EXECUTE,
    StepKind.DO_EXCHANGE,
    StepKind.ON_TILE_EXECUTE,
)
_NODE_KIND_OF_STEP = {
    StepKind.ON_TILE_EXECUTE: ProgramKind.EXECUTE,
    StepKind.DO_EXCHANGE: ProgramKind.COPY,
    StepKind.GLOBAL_EXCHANGE: ProgramKind.COPY,
    StepKind.STREAM_COPY_BEGIN: ProgramKind.STREAM_COPY,
    StepKind.STREAM_COPY_END: ProgramKind.STREAM_COPY,
    StepKind.SYNC: ProgramKind.SYNC,
}
NUM_DEBUG_CONTEXTS = 12


def make_report(seed: int = 0, **sizes: int | bool) -> tuple[ProfileData, DebugData]:
    """A profile and its debug contexts (sharing one report id); see ``make_profile``."""
    profile = make_profile(seed, **sizes)
    return profile, make_debug(profile.header.report_id, seed)


def make_profile(
    seed: int = 0,
    *,
    num_ipus: int = 2,
    tiles_per_ipu: int = 4,
    num_variables: int = 8,
    num_compute_sets: int = 3,
    num_steps: int = 10,
    num_runs: int = 2,
    executed: bool = True,
) -> ProfileData:
    """A complete profile; ``executed=False`` leaves out the execution profile."""
    rng = np.random.default_rng(seed)
    names = StringInterner()
    num_tiles = num_ipus * tiles_per_ipu
    graph = _graph(rng, names, num_tiles, num_variables, num_compute_sets)
    programs = _programs(rng, names, graph, num_ipus, tiles_per_ipu, num_steps)
    graph.strings = names.table()
    header = Header(
        format_major=FORMAT_MAJOR,
        format_minor=FORMAT_MINOR,
        producer="ipu_engine",
        producer_version="0.1.0",
        program_name=f"synthetic-{seed}",
        created_unix=1_700_000_000.25 + seed,
        report_id=f"report-{seed:04d}-{rng.integers(2**32):08x}",
        options={"autoReport.all": "true", "autoReport.directory": "./report"},
        out_of_memory=False,
    )
    return ProfileData(
        header=header,
        target=TargetInfo("ipu2", num_ipus, tiles_per_ipu, 638_976, 1.33e9),
        graph=graph,
        memory=_memory(rng, graph, num_tiles),
        programs=programs,
        liveness=_liveness(rng, graph, num_steps),
        execution=_execution(programs, num_runs) if executed else None,
    )


def make_debug(report_id: str, seed: int = 0, count: int = NUM_DEBUG_CONTEXTS) -> DebugData:
    """``count`` debug contexts; each context's parent precedes it."""
    rng = np.random.default_rng(seed + 1)
    layers = ["popops", "poplin", "popnn", "poputil"]
    return DebugData(
        report_id=report_id,
        name=[f"ctx{i}/layer{i % 3}" for i in range(count)],
        parent=np.array([-1 if i < 2 else rng.integers(0, i) for i in range(count)], np.int32),
        layer=[layers[i % 4] for i in range(count)],
        op=[["add", "matMul", "relu", "µ-scale"][i % 4] for i in range(count)],
        api=[f"{layers[i % 4]}::op{i}" for i in range(count)],
        file=["model.py" if i % 2 else "" for i in range(count)],
        line=np.arange(10, 10 + count, dtype=np.int32),
        args=[
            {"alpha": 0.5 * i, "shape": [i, 2], "name": f"x{i}", "inplace": i % 2 == 0, "n": None}
            if i % 3
            else {}
            for i in range(count)
        ],
    )


def element_size(var_type: int) -> int:
    return ELEMENT_SIZES[ELEMENT_TYPES[var_type]]


def _graph(rng, names, num_tiles, num_variables, num_compute_sets) -> GraphData:
    var_type = rng.integers(0, len(ELEMENT_TYPES), num_variables).astype(np.uint8)
    dims = [rng.integers(1, 9, rng.integers(1, 3)) for _ in range(num_variables)]
    elements = np.array([int(np.prod(d)) for d in dims], np.int64)
    sizes = np.array([element_size(t) for t in var_type], np.int64)
    is_constant = np.arange(num_variables) % 5 == 4
    regions = []  # (var, tile, start, elements)
    for var in range(num_variables):
        pieces = int(min(rng.integers(1, 4), elements[var]))
        cuts = np.sort(rng.choice(np.arange(1, elements[var]), pieces - 1, replace=False))
        bounds = [0, *cuts.tolist(), int(elements[var])]
        tiles = rng.choice(num_tiles, pieces, replace=False)
        regions += [(var, tiles[i], bounds[i], bounds[i + 1] - bounds[i]) for i in range(pieces)]
    region = np.array(regions, np.int64).reshape(-1, 4)
    vertex_counts = []  # (cs, type, tile, count)
    for cs in range(num_compute_sets):
        for vt in range(3):
            if (cs + vt) % 2 == 0:
                for tile in rng.choice(num_tiles, rng.integers(1, num_tiles + 1), replace=False):
                    vertex_counts.append((cs, vt, tile, rng.integers(1, 7)))
    vc = np.array(vertex_counts, np.int64).reshape(-1, 4)
    name_of = [f"layer{v % 3}/var{v}" if v != 1 else "layer1/µ-scale" for v in range(num_variables)]
    codelets = ["popops::ScaledAdd<float>", "poplin::ConvPartial1x1Out<half>", "popnn::Relu"]
    return GraphData(
        strings=names.table(),
        var_name=names.many(name_of),
        var_type=var_type,
        var_elements=elements,
        var_bytes=elements * sizes,
        var_is_constant=is_constant,
        var_always_live=is_constant | (np.arange(num_variables) % 3 == 0),
        var_debug=rng.integers(-1, NUM_DEBUG_CONTEXTS, num_variables).astype(np.int32),
        var_shape_offsets=np.concatenate(([0], np.cumsum([len(d) for d in dims]))).astype(np.int64),
        var_shape_dims=np.concatenate(dims).astype(np.int64),
        region_var=region[:, 0].astype(np.int32),
        region_tile=region[:, 1].astype(np.int32),
        region_start=region[:, 2].copy(),
        region_elements=region[:, 3].copy(),
        cs_name=names.many(
            f"cs{c}/{['add', 'matmul', 'relu'][c % 3]}" for c in range(num_compute_sets)
        ),
        cs_debug=rng.integers(0, NUM_DEBUG_CONTEXTS, num_compute_sets).astype(np.int32),
        vt_name=names.many(codelets),
        vt_code_bytes=np.array([1200, 3400, 560], np.int32),
        vt_supervisor=np.array([False, True, False]),
        vc_cs=vc[:, 0].astype(np.int32),
        vc_type=vc[:, 1].astype(np.int32),
        vc_tile=vc[:, 2].astype(np.int32),
        vc_count=vc[:, 3].astype(np.int32),
        vc_flops=vc[:, 3] * rng.integers(1, 100, len(vc)),
    )


def _memory(rng, graph: GraphData, num_tiles: int) -> MemoryData:
    """Variables by their regions, vertex code once per (type, tile), per-vertex state."""
    by_category = np.zeros((len(MemoryCategory), num_tiles), np.int64)
    var = graph.region_var
    region_bytes = graph.region_elements * (graph.var_bytes // graph.var_elements)[var]
    category = np.where(
        graph.var_is_constant[var],
        MemoryCategory.CONSTANTS,
        np.where(
            graph.var_always_live[var],
            MemoryCategory.ALWAYS_LIVE_VARIABLES,
            MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES,
        ),
    )
    np.add.at(by_category, (category, graph.region_tile), region_bytes)
    code_on = np.unique(np.stack([graph.vc_type, graph.vc_tile]), axis=1)
    np.add.at(by_category[MemoryCategory.VERTEX_CODE], code_on[1], graph.vt_code_bytes[code_on[0]])
    counts = np.bincount(graph.vc_tile, weights=graph.vc_count, minlength=num_tiles).astype(
        np.int64
    )
    by_category[MemoryCategory.VERTEX_STATE] = counts * VERTEX_STATE_BYTES
    by_category[MemoryCategory.VERTEX_DESCRIPTORS] = counts * VERTEX_DESCRIPTOR_BYTES
    by_category[MemoryCategory.CONTROL_CODE] = CONTROL_CODE_BYTES
    by_category[MemoryCategory.STACK] = STACK_BYTES
    by_category[MemoryCategory.INTERNAL_EXCHANGE_CODE] = rng.integers(0, 200, num_tiles) * 4
    by_category[MemoryCategory.ALIGNMENT_GAPS] = rng.integers(0, 8, num_tiles)
    return MemoryData(by_category=by_category, interleaved=rng.integers(0, 64, num_tiles) * 8)


def _programs(rng, names, graph: GraphData, num_ipus, tiles_per_ipu, num_steps) -> ProgramData:
    """Program 1 runs steps [0, 2); program 0 runs the rest, its second half in a Repeat."""
    kinds = [STEP_PATTERN[s % len(STEP_PATTERN)] for s in range(num_steps)]
    num_cs = len(graph.cs_name)
    executes = [s for s in range(num_steps) if kinds[s] == StepKind.ON_TILE_EXECUTE]
    step_cs = np.full(num_steps, -1, np.int32)
    step_cs[executes] = np.arange(len(executes)) % num_cs
    # Compute cycles of each (compute set, tile) with vertices; a step's cycles on an IPU are
    # those of its slowest tile there.
    pairs = np.unique(np.stack([graph.vc_cs, graph.vc_tile]), axis=1)
    cst_cycles = rng.integers(20, 400, pairs.shape[1]).astype(np.int32)
    step_cycles = rng.integers(50, 500, (num_steps, num_ipus)).astype(np.int64)
    for s in executes:
        for ipu in range(num_ipus):
            on_ipu = (pairs[0] == step_cs[s]) & (pairs[1] // tiles_per_ipu == ipu)
            step_cycles[s, ipu] = cst_cycles[on_ipu].max(initial=0)
    step_cycles[[s for s in range(num_steps) if kinds[s] == StepKind.SYNC]] = 30
    exchanges = [
        s for s in range(num_steps) if kinds[s] in (StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE)
    ]
    num_tiles = num_ipus * tiles_per_ipu
    exch_step = np.repeat(np.array(exchanges, np.int32), num_tiles)
    # Program tree, depth-first: root 0, leaves before the repeat, the repeat, its leaves,
    # root 1, its leaves.
    split = HOST_PROGRAM_STEPS + (num_steps - HOST_PROGRAM_STEPS) // 2
    plain, body, host = (
        range(HOST_PROGRAM_STEPS, split),
        range(split, num_steps),
        range(HOST_PROGRAM_STEPS),
    )
    nodes = [(ProgramKind.SEQUENCE, "main", -1, HOST_PROGRAM_STEPS, 0)]
    nodes += [(_NODE_KIND_OF_STEP[kinds[s]], f"step{s}", 0, s, 0) for s in plain]
    repeat = len(nodes)
    nodes.append((ProgramKind.REPEAT, "repeat", 0, split if body else -1, REPEAT_COUNT))
    nodes += [(_NODE_KIND_OF_STEP[kinds[s]], f"step{s}", repeat, s, 0) for s in body]
    root1 = len(nodes)
    nodes.append((ProgramKind.SEQUENCE, "host writes", -1, 0, 0))
    nodes += [(_NODE_KIND_OF_STEP[kinds[s]], f"step{s}", root1, s, 0) for s in host]
    step_node = np.zeros(num_steps, np.int32)
    for index, node in enumerate(nodes):
        if node[0] not in (ProgramKind.SEQUENCE, ProgramKind.REPEAT):
            step_node[node[3]] = index
    return ProgramData(
        node_kind=np.array([n[0] for n in nodes], np.uint8),
        node_name=names.many(n[1] for n in nodes),
        node_parent=np.array([n[2] for n in nodes], np.int32),
        node_step=np.array([n[3] for n in nodes], np.int32),
        node_count=np.array([n[4] for n in nodes], np.int64),
        node_debug=rng.integers(-1, NUM_DEBUG_CONTEXTS, len(nodes)).astype(np.int32),
        node_function=np.full(len(nodes), -1, np.int32),
        roots=np.array([0, root1], np.int32),
        step_kind=np.array(kinds, np.uint8),
        step_name=names.many(f"step{s}/{kinds[s].poplar_name}" for s in range(num_steps)),
        step_cs=step_cs,
        step_debug=rng.integers(-1, NUM_DEBUG_CONTEXTS, num_steps).astype(np.int32),
        step_node=step_node,
        step_cycles=step_cycles,
        step_global_bytes=np.array(
            [rng.integers(1, 9) * 1024 if k == StepKind.GLOBAL_EXCHANGE else 0 for k in kinds],
            np.int64,
        ),
        exch_step=exch_step,
        exch_tile=np.tile(np.arange(num_tiles, dtype=np.int32), len(exchanges)),
        exch_bytes_in=rng.integers(0, 4096, len(exch_step)).astype(np.int64),
        exch_bytes_out=rng.integers(0, 4096, len(exch_step)).astype(np.int64),
        cst_cs=pairs[0].astype(np.int32),
        cst_tile=pairs[1].astype(np.int32),
        cst_cycles=cst_cycles,
    )


def _liveness(rng, graph: GraphData, num_steps: int) -> LivenessData:
    """One live range per not-always-live variable; a step's live bytes sum those covering it."""
    variables = np.flatnonzero(~graph.var_always_live).astype(np.int32)
    first = rng.integers(0, num_steps, len(variables)).astype(np.int32)
    last = np.array([rng.integers(f, num_steps) for f in first], np.int32)
    steps = np.arange(num_steps)[:, None]
    covers = (first[None, :] <= steps) & (steps <= last[None, :])
    return LivenessData(
        always_live_bytes=int(graph.var_bytes[graph.var_always_live].sum()),
        step_live_bytes=(covers * graph.var_bytes[variables][None, :]).sum(axis=1).astype(np.int64),
        interval_var=variables,
        interval_first=first,
        interval_last=last,
    )


def _execution(programs: ProgramData, num_runs: int) -> ExecutionData:
    """Runs alternate program 1 and program 0; steps run back to back on the slowest IPU."""
    num_steps = programs.num_steps
    split = HOST_PROGRAM_STEPS + (num_steps - HOST_PROGRAM_STEPS) // 2
    executed = {
        0: list(range(HOST_PROGRAM_STEPS, split)) + list(range(split, num_steps)) * REPEAT_COUNT,
        1: list(range(HOST_PROGRAM_STEPS)),
    }
    duration = programs.step_cycles.max(axis=1)
    runs = []
    for r in range(num_runs):
        program = 1 - r % 2
        step_ids = np.array(executed[program], np.int32)
        ends = np.cumsum(duration[step_ids])
        runs.append(
            RunData(
                program=program,
                name=f"run {r}: {'main' if program == 0 else 'host writes'}",
                step_ids=step_ids,
                start_cycles=(ends - duration[step_ids]).astype(np.int64),
                total_cycles=int(ends[-1]) if len(ends) else 0,
            )
        )
    return ExecutionData(runs=runs)
