"""Compiling an engine's programs into an Executable: checked, lowered, ready to run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ipu_engine.common.arguments import instance_arg, sequence_arg
from ipu_engine.common.errors import ProgramError
from ipu_engine.poplar.compiler.block_marks import BlockMarks
from ipu_engine.poplar.compiler.checks import (
    check_constants_unwritten,
    check_tile_mapping,
    check_vertices,
)
from ipu_engine.poplar.compiler.known_facts import KnownFacts
from ipu_engine.poplar.compiler.lower import Lowering
from ipu_engine.poplar.compiler.program_tree import check_program_tree
from ipu_engine.poplar.compiler.steps import Node, Step
from ipu_engine.poplar.compiler.vertex_plans import ComputeSetPlan
from ipu_engine.poplar.executor import Runner, build_runner
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Program


@dataclass
class Executable:
    """What an engine runs: one control tree per program, and every program step."""

    graph: Graph
    programs: list[Program]
    roots: list[Node]
    steps: list[Step]
    plans: dict[int, ComputeSetPlan]
    function_nodes: dict[int, Node]
    streams_used: list[set[str]]
    may_fail: bool
    lowering: Lowering
    runners: list[Runner] = field(default_factory=list)
    function_runners: dict[int, Runner] = field(default_factory=dict)
    # with lightweight profiling: the runners without the marks (for one-path programs)
    unmarked_runners: list[Runner] = field(default_factory=list)


def compile_programs(graph: Graph, programs: Program | Sequence[Program]) -> Executable:
    """Check the graph, lower each program and build its runner."""
    return lower_programs(graph, check_programs(graph, programs))


def check_programs(graph: Graph, programs: Program | Sequence[Program]) -> list[Program]:
    """The programs as a list, once they and the graph are known to compile (this also
    turns vertex edges connected one element at a time into columns)."""
    programs = (
        [programs]
        if isinstance(programs, Program)
        else sequence_arg(programs, "Engine: the programs", ProgramError)
    )
    for i, program in enumerate(programs):
        instance_arg(program, Program, f"Engine: program {i}", ProgramError)
    if not programs:
        raise ProgramError("an engine needs at least one program")
    for i, p in enumerate(programs):
        if not isinstance(p, Program):
            raise ProgramError(f"program {i} is a {type(p).__name__}, not a program")
    check_program_tree(programs)
    check_tile_mapping(graph)
    check_vertices(graph)
    return programs


def lower_programs(
    graph: Graph,
    programs: list[Program],
    known: KnownFacts | None = None,
    marks: BlockMarks | None = None,
) -> Executable:
    """Lower checked programs and build their runners; ``known`` facts (from an
    executable cache entry) are used instead of being worked out again; ``marks`` (new,
    for this lowering) time the programs lightweight profiling's filters choose."""
    lowering = Lowering(graph, known, marks)
    roots, streams_used, root_nodes = [], [], []
    for p in programs:
        lowering.streams_used = set()
        root_nodes.append(len(lowering.nodes))
        roots.append(lowering.lower(p))
        streams_used.append(lowering.streams_used)
    lowering.root_nodes = root_nodes
    if marks is not None:
        marks.warn_unmatched()
    check_constants_unwritten(graph, lowering.steps)
    # the lowering was the last to look tiles up by address: the joined intervals that
    # answered it go (as big as the mapping; the layout reads each variable's own)
    lowering.tile_runs.clear()
    for pool in graph.pools.values():
        pool.tiles.forget_joined()
    exe = Executable(
        graph,
        programs,
        roots,
        lowering.steps,
        lowering.plans,
        lowering.functions,
        streams_used,
        lowering.may_fail,
        lowering,
    )
    for fid, node in exe.function_nodes.items():
        exe.function_runners[fid] = build_runner(node, exe.function_runners)
    exe.runners = [build_runner(root, exe.function_runners) for root in roots]
    if lowering.marks is not None:
        unmarked: dict[int, Runner] = {}
        for fid, node in exe.function_nodes.items():
            unmarked[fid] = build_runner(node, unmarked, marked=False)
        exe.unmarked_runners = [build_runner(root, unmarked, marked=False) for root in roots]
    return exe
