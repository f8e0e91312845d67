"""Open a report and run every analysis, the pva facade and every CLI command on it, letting
only ReportError through: what bad-input and fuzz tests call on damaged reports."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np

from profiler_core import pva
from profiler_core.analysis.compare import compare_reports
from profiler_core.analysis.execution import cycle_breakdown, run_totals, tile_balance
from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.analysis.memory import memory_table, variables_on_tiles
from profiler_core.analysis.operations import operations_table
from profiler_core.analysis.program_tree import program_tree
from profiler_core.analysis.trace_window import trace_window
from profiler_core.cli import main
from profiler_core.errors import ReportError
from profiler_core.report import open_report

CLI_COMMANDS = (
    ["summary", "--json"],
    ["memory", "--csv", "--max-percent", "50"],
    ["memory", "--variables"],
    ["liveness"],
    ["program-tree"],
    ["operations", "--group-by", "name"],
    ["execution"],
)


def attempt(errors: list[ReportError], fn: Callable[[], object]) -> object:
    """Call ``fn``; keep a ReportError, let anything else escape."""
    try:
        return fn()
    except ReportError as error:
        errors.append(error)
        return None


def analyse_everything(path: Path) -> list[ReportError]:
    """Every analysis on the report at ``path``; returns the ReportErrors raised."""
    errors: list[ReportError] = []
    report = attempt(errors, lambda: open_report(path))
    if report is None:
        return errors
    attempt(errors, lambda: report.summary(check_debug=True))
    table = attempt(errors, lambda: memory_table(report))
    if table is not None:  # the target's tiles are known to be sane only when this worked
        table.per_ipu(False), table.over_limit(90), table.breakdown(np.array([0]))
        attempt(errors, lambda: variables_on_tiles(report, np.arange(table.num_tiles)))
    live = attempt(errors, lambda: liveness_table(report))
    if live is not None and live.peak_step >= 0:
        attempt(errors, lambda: variables_live_at(report, live.peak_step))
    attempt(errors, lambda: program_tree(report))
    for group_by in ("op", "layer", "name", "context"):
        attempt(errors, lambda g=group_by: operations_table(report, g))
    totals = attempt(errors, lambda: run_totals(report))
    for run in range(len(totals) if totals is not None else 0):
        attempt(errors, lambda r=run: cycle_breakdown(report, r))
        end = max(int(totals.cycles[run]), 1)
        attempt(errors, lambda r=run, e=end: trace_window(report, r, 0, 0, e, 50))
    steps = attempt(errors, lambda: np.flatnonzero(report.programs.step_cs >= 0))
    if steps is not None and steps.size:
        attempt(errors, lambda: tile_balance(report, int(steps[0])))
    comparison = compare_reports(report, report)
    for part in ("memory", "cycles", "variables", "steps", "programs"):
        attempt(errors, lambda p=part: getattr(comparison, p))
    attempt(errors, lambda: comparison.operations("op"))
    attempt(errors, lambda: _script(path))
    return errors


_EXCHANGES = ("DoExchange", "GlobalExchange")


def _script(path: Path) -> None:
    """What a libpva script touches first."""
    report = pva.openReport(path)
    touched = [report.compilation.target.numTiles, report.compilation.target.architecture]
    touched.append(report.compilation.tiles[0].memory.total.includingGaps)
    touched += [cs.vertices for cs in report.compilation.computeSets[:3]]
    steps = report.execution.steps
    if len(steps):
        touched.append(steps[0].cyclesByTile)
        steps[0].program.accept(pva.ProgramVisitor())
        touched.append(steps[-1].ipus[0].activeCycles.cyclesTo.max)
        touched.append(steps[0].ipus[0].dataIn)
    compilation = report.compilation
    tile = compilation.tiles[0]
    touched += [tile.memory.category.vertexCode.total, tile.memory.vertices]
    touched.append(compilation.alwaysLiveVariablesForTile(0))
    for program in compilation.programs[:3]:
        touched += [program.children, program.controlCodeByTile, program.vars]
        touched += [program.codeBytesByTile] if program.type.name in _EXCHANGES else []
    live = compilation.livenessProgramSteps
    if len(live):
        touched += [live[0].notAlwaysLiveMemoryForTile(0).variables]
        touched += [live[-1].notAlwaysLiveMemoryForIpu(0).bytes]
    touched += [v.equivalenceClass.steps for v in compilation.loweredVariables.forTile(0)[:3]]
    for op in pva.OperationAnalysis(report).operations[:3]:
        touched += [op.programs(), op.vars, op.debugContext.json, op.debugContext.parents]


def cli_everything(path: Path) -> list[tuple[int, str]]:
    """(exit code, stderr) of every CLI command on ``path``."""
    results = []
    for argv in CLI_COMMANDS:
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main([*argv, str(path)])
        results.append((code, err.getvalue()))
    return results
