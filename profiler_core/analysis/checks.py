"""Cross-section checks: every reference from one section into another is checked here before
an analysis indexes with it, so a decodable but inconsistent report raises ``ReportError``
naming the section and the problem instead of an ``IndexError`` or a wrong answer.

The readers check each section on its own; these checks join sections (a step's compute
set against the graph, a region's tile against the target, a run's steps against the
programs). Each is a handful of vectorised min/max passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.model.kinds import MemoryCategory, ProgramKind, StepKind
from profiler_core.model.profile import (
    DebugData,
    GraphData,
    LivenessData,
    ProgramData,
    ProgramSteps,
    RunData,
    TargetInfo,
)

MAX_TILES = 1 << 22
"""More tiles than any IPU system has (4M); a target above it is damaged, not large."""
MAX_TILE_BYTES = 1 << 40
"""More bytes than a tile could ever hold; memory above it is damaged, and sums would overflow."""


def report_path(report: Any) -> Path | None:
    """The file an error should name: the profile.pop of an open Report, else None."""
    return getattr(report, "profile_path", None)


def fail(report: Any, section: str, problem: str) -> NoReturn:
    raise ReportError(report_path(report), f"section '{section}': {problem}")


def debug_of(report: Any, debug: Any = None, strict: bool = False) -> DebugData | None:
    """``debug`` if given, else the report's debug contexts, else None (a ``ProfileData``, or
    a folder without debug.cbor). ``strict`` raises the ReportError of a damaged or
    mismatched debug.cbor; otherwise it is treated as absent."""
    if debug is not None or not hasattr(report, "debug_or_none"):
        return debug
    return report.debug if strict else report.debug_or_none()


def checked_target(report: Any) -> TargetInfo:
    target = report.target
    if target.num_ipus < 1 or target.tiles_per_ipu < 1 or target.num_tiles > MAX_TILES:
        fail(report, "target", f"{target.num_ipus} IPUs of {target.tiles_per_ipu} tiles")
    return target


def checked_memory(report: Any) -> np.ndarray:
    """``by_category`` (categories this reader knows, tiles) after checking it fits the target."""
    target = checked_target(report)
    by_category = report.memory.by_category
    categories, tiles = by_category.shape
    if categories < len(MemoryCategory):
        known = len(MemoryCategory)
        fail(report, "memory", f"{categories} memory categories, but there are {known}")
    if tiles != target.num_tiles:
        fail(
            report,
            "memory",
            f"memory for {tiles} tiles, but section 'target' has {target.num_tiles} tiles",
        )
    # A newer minor version may append categories; this reader shows the ones it knows.
    by_category = by_category[: len(MemoryCategory)]
    if by_category.size and (by_category.min() < 0 or by_category.max() > MAX_TILE_BYTES):
        bad = by_category.min() if by_category.min() < 0 else by_category.max()
        fail(report, "memory", f"a tile holds {bad} bytes of one category")
    return by_category


def _in_range(
    report: Any, section: str, column: str, values: np.ndarray, rows: int, what: str, low: int = 0
) -> None:
    if values.size == 0:
        return
    lowest, highest = int(values.min()), int(values.max())
    if lowest < low or highest >= rows:
        bad = lowest if lowest < low else highest
        fail(report, section, f"'{column}' refers to {what} {bad}, but there are {rows}")


def checked_graph(report: Any) -> GraphData:
    """The graph, with its tile references checked against the target."""
    tiles = checked_target(report).num_tiles
    graph = report.graph
    _in_range(report, "graph", "region_tile", graph.region_tile, tiles, "tile")
    _in_range(report, "graph", "vc_tile", graph.vc_tile, tiles, "tile")
    return graph


def checked_step_labels(report: Any) -> ProgramSteps:
    """The program steps, with their kinds and names checked (what a list of steps shows; the
    steps' costs are not decoded for it)."""
    programs = report.program_steps
    strings = len(report.strings)  # the string table alone: the graph's columns wait
    _in_range(report, "programs", "step_kind", programs.step_kind, len(StepKind), "step kind")
    _in_range(report, "programs", "step_name", programs.step_name, strings, "string", low=-1)
    return programs


def checked_programs(report: Any) -> ProgramData:
    """The programs, with compute sets, tiles, IPUs and kinds checked against the other sections."""
    target = checked_target(report)
    programs = report.programs
    graph = report.graph
    num_cs, num_strings = len(graph.cs_name), len(graph.strings)
    tiles = target.num_tiles
    _in_range(report, "programs", "step_name", programs.step_name, num_strings, "string", low=-1)
    _in_range(report, "programs", "node_name", programs.node_name, num_strings, "string", low=-1)
    _in_range(report, "programs", "step_cs", programs.step_cs, num_cs, "compute set", low=-1)
    _in_range(report, "programs", "cst_cs", programs.cst_cs, num_cs, "compute set")
    _in_range(report, "programs", "cst_tile", programs.cst_tile, tiles, "tile")
    _in_range(report, "programs", "exch_tile", programs.exch_tile, tiles, "tile")
    _in_range(report, "programs", "step_kind", programs.step_kind, len(StepKind), "step kind")
    _in_range(report, "programs", "node_kind", programs.node_kind, len(ProgramKind), "node kind")
    cycles = programs.step_cycles
    if cycles.shape != (programs.num_steps, target.num_ipus):
        fail(
            report,
            "programs",
            f"'step_cycles' has shape {cycles.shape}, but there are {programs.num_steps} steps "
            f"on {target.num_ipus} IPUs",
        )
    if cycles.size and int(cycles.min()) < 0:
        fail(report, "programs", "'step_cycles' holds negative cycles")
    if programs.cst_cycles.size and int(programs.cst_cycles.min()) < 0:
        fail(report, "programs", "'cst_cycles' holds negative cycles")
    busy = getattr(programs, "cs_busy_cycles", None)
    if busy is not None and len(busy) != num_cs:
        fail(
            report,
            "programs",
            f"'cs_busy_cycles' has {len(busy)} rows but the graph has {num_cs} compute sets",
        )
    if busy is not None and busy.size and int(busy.min()) < 0:
        fail(report, "programs", "'cs_busy_cycles' holds negative cycles")
    return programs


def checked_live_bytes(report: Any) -> LivenessData:
    """Liveness, with its live bytes per step checked against the programs' steps (what the
    live bytes of each step need: the graph's columns are not decoded for it)."""
    liveness = report.liveness
    steps = report.program_steps.num_steps
    if len(liveness.step_live_bytes) != steps:
        fail(
            report,
            "liveness",
            f"live bytes for {len(liveness.step_live_bytes)} steps, but there are {steps} steps",
        )
    return liveness


def checked_liveness(report: Any) -> LivenessData:
    """Liveness, with its steps and variables checked against the programs and the graph."""
    liveness = checked_live_bytes(report)
    steps = report.program_steps.num_steps
    variables = report.graph.num_variables
    _in_range(report, "liveness", "interval_var", liveness.interval_var, variables, "variable")
    _in_range(report, "liveness", "interval_first", liveness.interval_first, steps, "step")
    _in_range(report, "liveness", "interval_last", liveness.interval_last, steps, "step")
    return liveness


def checked_runs(report: Any) -> list[RunData]:
    """The runs (empty when the program never ran), with their steps checked."""
    execution = report.execution
    if execution is None:
        return []
    steps = report.program_steps.num_steps
    for index, run in enumerate(execution.runs):
        where = f"run {index}: "
        if run.step_ids.size:
            lowest, highest = int(run.step_ids.min()), int(run.step_ids.max())
            if lowest < 0 or highest >= steps:
                bad = lowest if lowest < 0 else highest
                fail(report, "execution", f"{where}executes step {bad}, but there are {steps}")
        starts = run.start_cycles
        # Compared in place: np.diff would copy a run's start cycles (8 MB a million).
        if starts.size and (int(starts[0]) < 0 or (starts[1:] < starts[:-1]).any()):
            fail(report, "execution", f"{where}start cycles go backwards")
        if run.total_cycles < 0:
            fail(report, "execution", f"{where}{run.total_cycles} total cycles")
    return execution.runs


def checked_run(report: Any, run: int) -> RunData:
    """Run ``run``, after checking every run (a linear pass over their steps)."""
    return _run_at(report, run, checked_runs(report))


def selected_runs(report: Any, run: int | None) -> list[RunData]:
    """Every run (checked) when ``run`` is None, else just run ``run``."""
    runs = checked_runs(report)
    return runs if run is None else [_run_at(report, run, runs)]


def run_at(report: Any, run: int) -> RunData:
    """Run ``run`` unchecked, for callers that check the slice they use (interactive ones)."""
    execution = report.execution
    return _run_at(report, run, [] if execution is None else execution.runs)


def _run_at(report: Any, run: int, runs: list[RunData]) -> RunData:
    if not 0 <= run < len(runs):
        raise ReportError(
            report_path(report),
            f"there is no run {run}; the report has {len(runs)} run(s)"
            + (f", 0 to {len(runs) - 1}" if runs else ""),
        )
    return runs[run]


def check_debug_ids(report: Any, section: str, column: str, ids: np.ndarray, debug: Any) -> None:
    """Debug context ids must be -1 or a context of ``debug`` (when there is one)."""
    if debug is None:
        return
    _in_range(report, section, column, ids, len(debug), "debug context", low=-1)
