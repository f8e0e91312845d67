"""The content of ``profile.pop`` and ``debug.cbor`` as plain dataclasses of numpy columns.

The engine fills these and hands them to the writers; the readers give them back. Every
per-item table is a set of equal-length columns named ``<table>_<column>``; names are
indices into the graph's string table. Index columns use -1 for "none".
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from profiler_core.model.strings import Strings

FORMAT_MAJOR = 1
# 1.1: framework, instrumentation, target type, replicas, edges, state; 1.2: section checksums;
# 1.3: the graph's counts beside it (the Summary shows them without the graph's columns);
# 1.4: the programs' steps and their costs checked apart (the Summary needs only the steps);
# 1.5: lightweight profiling's blocks (every execution of each timed Block and StreamCopy)
FORMAT_MINOR = 5


@dataclass
class Header:
    """Who wrote the report, for which program, and whether it fitted."""

    format_major: int
    format_minor: int
    producer: str  # "ipu_engine"
    producer_version: str
    program_name: str
    created_unix: float
    report_id: str  # shared with debug.cbor, so a mismatched pair is detected
    options: dict[str, str] = field(default_factory=dict)
    out_of_memory: bool = False
    framework: dict[str, str] = field(default_factory=dict)  # what ran on the engine
    instrumentation: str = ""  # "" when not recorded (format 1.0)
    traces: list[str] = field(default_factory=list)  # absolute .pvti paths written alongside


@dataclass
class TargetInfo:
    version: str
    num_ipus: int
    tiles_per_ipu: int
    bytes_per_tile: int
    clock_hz: float
    type: str = ""  # "IPU Model" or "IPU"; "" when not recorded (format 1.0)
    replicas: int = 0  # 0 when not recorded: read as one replica
    ipus_per_replica: int = 0  # 0 when not recorded: every IPU

    @property
    def num_tiles(self) -> int:
        return self.num_ipus * self.tiles_per_ipu

    @property
    def replication_factor(self) -> int:
        return max(self.replicas, 1)

    @property
    def ipus_in_a_replica(self) -> int:
        return self.ipus_per_replica or max(self.num_ipus // self.replication_factor, 1)


@dataclass
class GraphData:
    """Variables with their tile mapping, compute sets and vertex counts."""

    strings: Strings
    # variables and constants (V rows)
    var_name: np.ndarray  # int32 string index
    var_type: np.ndarray  # uint8 index into kinds.ELEMENT_TYPES
    var_elements: np.ndarray  # int64
    var_bytes: np.ndarray  # int64 (elements x element size, before alignment)
    var_is_constant: np.ndarray  # bool
    var_always_live: np.ndarray  # bool
    var_debug: np.ndarray  # int32 debug context id
    var_shape_offsets: np.ndarray  # int64 (V + 1): var i's dims are shape_dims[o[i]:o[i+1]]
    var_shape_dims: np.ndarray  # int64
    # tile mapping: contiguous runs of a variable's flat elements on one tile (R rows)
    region_var: np.ndarray  # int32
    region_tile: np.ndarray  # int32
    region_start: np.ndarray  # int64 first flat element
    region_elements: np.ndarray  # int64
    # compute sets (C rows)
    cs_name: np.ndarray  # int32 string index
    cs_debug: np.ndarray  # int32
    # vertex types (T rows): codelets
    vt_name: np.ndarray  # int32 string index
    vt_code_bytes: np.ndarray  # int32 code size, paid once per tile that runs it
    vt_supervisor: np.ndarray  # bool
    # vertex counts per (compute set, vertex type, tile) (N rows)
    vc_cs: np.ndarray  # int32
    vc_type: np.ndarray  # int32
    vc_tile: np.ndarray  # int32
    vc_count: np.ndarray  # int32
    vc_flops: np.ndarray  # int64 floating-point operations of those vertices per execution
    num_edges: int = -1  # edges of every vertex; -1 when not recorded (format 1.0)
    vt_state_bytes: np.ndarray | None = None  # int64 (T,) state of one vertex; None in 1.0
    #: int32 (N,) the debug context of the op that added each row's vertices; rows are then
    #: per (compute set, type, tile, context), as a compute set shared by several ops (a
    #: pipeline's time step) holds each op's vertices. None in older files: the compute set's.
    vc_debug: np.ndarray | None = None

    def vertex_contexts(self) -> np.ndarray:
        """The debug context of each vertex-count row (its compute set's in older files)."""
        if self.vc_debug is not None:
            return self.vc_debug
        return self.cs_debug[self.vc_cs] if len(self.cs_debug) else self.vc_cs

    @property
    def num_variables(self) -> int:
        return len(self.var_name)

    def counts(self) -> GraphCounts:
        """How big the graph is: its tables' lengths and its vertex and edge totals."""
        constants = int(np.count_nonzero(self.var_is_constant))
        return GraphCounts(
            variables=len(self.var_name) - constants,
            constants=constants,
            vertices=int(self.vc_count.sum(dtype=np.int64)),
            edges=int(self.num_edges),
            compute_sets=len(self.cs_name),
            codelets=len(self.vt_name),
        )

    def shape_of(self, var: int) -> tuple[int, ...]:
        begin, end = self.var_shape_offsets[var], self.var_shape_offsets[var + 1]
        return tuple(int(d) for d in self.var_shape_dims[begin:end])


@dataclass(frozen=True)
class GraphCounts:
    """The graph at a glance, as Graph Analyser's summary lists it. profile.pop 1.3 stores
    it beside the graph, with a checksum of its own, so a first page shows it without
    decoding (and checking) the graph's columns: two thirds of a big report."""

    variables: int  # not counting constants
    constants: int
    vertices: int
    edges: int  # -1 when not recorded (format 1.0)
    compute_sets: int
    codelets: int  # vertex types


@dataclass
class MemoryData:
    """Bytes per tile by category: ``by_category[c, tile]`` for ``MemoryCategory(c)``."""

    by_category: np.ndarray  # int64 (num categories, num tiles)
    interleaved: np.ndarray  # int64 (num tiles,) bytes in the interleaved region

    @property
    def total_including_gaps(self) -> np.ndarray:
        return self.by_category.sum(axis=0)


@dataclass
class ProgramSteps:
    """The program tree and its program steps' kinds and names: what a list of steps shows.
    profile.pop 1.4 checks it apart from the steps' costs (``ProgramData``), so the Summary
    shows the steps without checking every tile's exchange and compute cycles."""

    # program tree nodes (P rows), in depth-first order; a node's parent precedes it
    node_kind: np.ndarray  # uint8 kinds.ProgramKind
    node_name: np.ndarray  # int32 string index (into GraphData.strings)
    node_parent: np.ndarray  # int32, -1 for roots
    node_step: np.ndarray  # int32 first program step the node lowered to, -1 if none
    node_count: np.ndarray  # int64 repeat count (Repeat), else 0
    node_debug: np.ndarray  # int32
    node_function: np.ndarray  # int32 function id (FUNCTION and CALL nodes), else -1
    roots: np.ndarray  # int32 root node of each engine program (index = program index)
    # program steps (S rows), in the order they were lowered
    step_kind: np.ndarray  # uint8 kinds.StepKind
    step_name: np.ndarray  # int32 string index
    step_cs: np.ndarray  # int32 compute set, -1 if none
    step_debug: np.ndarray  # int32
    step_node: np.ndarray  # int32 program tree node
    step_global_bytes: np.ndarray  # int64 bytes crossing IPU-Links in the step

    @property
    def num_steps(self) -> int:
        return len(self.step_kind)


@dataclass
class ProgramData(ProgramSteps):
    """The program tree and its steps, with their costs: modelled cycles per step and IPU,
    exchange traffic per tile, compute cycles per tile."""

    step_cycles: np.ndarray  # int64 (S, num IPUs): modelled cycles of the step on each IPU
    # exchange traffic of exchange steps, per tile (E rows)
    exch_step: np.ndarray  # int32
    exch_tile: np.ndarray  # int32
    exch_bytes_in: np.ndarray  # int64
    exch_bytes_out: np.ndarray  # int64
    # compute cycles per tile of each compute set, where it has vertices (K rows)
    cst_cs: np.ndarray  # int32
    cst_tile: np.ndarray  # int32
    cst_cycles: np.ndarray  # int32 (a compute set runs < 2**31 cycles on a tile)
    # per compute set (one row each, as GraphData.cs_name): its tiles' compute cycles
    # excluding idle worker threads (the vertices' own cycles), summed; None in older files
    cs_busy_cycles: np.ndarray | None = None

    def steps(self) -> ProgramSteps:
        """The tree and steps alone (the same arrays, not copies)."""
        return ProgramSteps(**{f.name: getattr(self, f.name) for f in fields(ProgramSteps)})


@dataclass
class LivenessData:
    """Which not-always-live variables are live at each program step."""

    always_live_bytes: int
    step_live_bytes: np.ndarray  # int64 (S,) not-always-live bytes live during each step
    interval_var: np.ndarray  # int32 variable
    interval_first: np.ndarray  # int32 first step of a live range
    interval_last: np.ndarray  # int32 last step (inclusive)


@dataclass
class RunData:
    """One run of an engine program: the steps executed, in order, with start cycles."""

    program: int
    name: str
    step_ids: np.ndarray  # int32 program step of each executed instance
    start_cycles: np.ndarray  # int64 cycle at which each instance starts (all IPUs in step)
    total_cycles: int  # cycles from the run's start to the end of its last step


@dataclass
class ExecutionData:
    runs: list[RunData]


@dataclass
class BlocksData:
    """Lightweight profiling (profile.pop 1.5): every execution of each timed block -- a Block
    program matched by ``profiler.blocks.filter``, a program matched by
    ``profiler.programs.filter``, each StreamCopy's phases -- with its start and end on the
    IPU's cycle counter (counting from the engine's load; runs follow one another). Names
    are indices into the section's own ``strings``, so it reads without the graph."""

    strings: Strings  # names of blocks and runs
    tile: int  # the tile of each IPU that times blocks (profiler.blocks.tile)
    # blocks (B rows): what is timed
    block_name: np.ndarray  # int32 string index
    block_kind: np.ndarray  # uint8 kinds.BlockKind
    block_node: np.ndarray  # int32 program tree node (programs section), -1 for none
    # runs (R rows): the runs whose blocks are kept, in the execution section's order
    run_program: np.ndarray  # int32 engine program
    run_name: np.ndarray  # int32 string index
    run_start: np.ndarray  # int64 the cycle counter when the run started
    run_cycles: np.ndarray  # int64 the run's length in cycles
    # executions (X rows): one per execution of a block on one IPU
    exec_block: np.ndarray  # int32 block
    exec_run: np.ndarray  # int32 run
    exec_ipu: np.ndarray  # int32
    exec_tile: np.ndarray  # int32 the tile that timed it (a StreamCopy's: where its data is)
    exec_depth: np.ndarray  # int32 blocks open around it when it started (0: outermost)
    exec_start: np.ndarray  # int64 cycle counter at its start
    exec_end: np.ndarray  # int64 cycle counter at its end (>= start)

    @property
    def num_executions(self) -> int:
        return len(self.exec_block)


@dataclass
class ProfileData:
    """Everything in one ``profile.pop``. ``execution`` is None before any run."""

    header: Header
    target: TargetInfo
    graph: GraphData
    memory: MemoryData
    programs: ProgramData
    liveness: LivenessData
    execution: ExecutionData | None = None
    blocks: BlocksData | None = None  # lightweight profiling, when it was on (1.5)

    @property
    def strings(self) -> Strings:
        """The names of variables, compute sets and steps (as an opened Report has)."""
        return self.graph.strings

    @property
    def program_steps(self) -> ProgramSteps:
        """The program tree and steps without their costs (as an opened Report has)."""
        return self.programs.steps()


@dataclass
class DebugData:
    """Everything in one ``debug.cbor``: debug contexts by id (C rows)."""

    report_id: str
    name: list[str]
    parent: np.ndarray  # int32, -1 for none
    layer: list[str]
    op: list[str]
    api: list[str]
    file: list[str]
    line: np.ndarray  # int32
    args: list[dict[str, Any]]
    #: Read from a file written before debug.cbor checksums (format 2.0 or 1): says that
    #: damage to it cannot be detected ("" when it was checked).
    integrity_note: str = field(default="", compare=False)

    def __len__(self) -> int:
        return len(self.name)
