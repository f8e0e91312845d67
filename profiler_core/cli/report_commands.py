"""The one-report subcommands of ``popvision-cli``: each turns an open report and its
arguments into an ``Output`` of tables, using the analyses and nothing else."""

from __future__ import annotations

import argparse

import numpy as np

from profiler_core.analysis.execution import cycle_breakdown, run_totals, tile_balance
from profiler_core.analysis.execution_summary import TOTAL_LABEL, execution_summary
from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.analysis.memory import MemoryTable, memory_table, variables_on_tiles
from profiler_core.analysis.program_tree import program_tree
from profiler_core.analysis.tiles import format_tile_selection, parse_tile_selection
from profiler_core.cli.blocks_command import blocks_output
from profiler_core.cli.operations_command import operations
from profiler_core.cli.output import Output, category_column
from profiler_core.cli.summary_command import summary
from profiler_core.cli.tables import Table
from profiler_core.model.kinds import ProgramKind, StepKind
from profiler_core.report import Report

__all__ = ["execution", "liveness", "memory", "operations", "program_tree_command", "summary"]


def memory(report: Report, args: argparse.Namespace) -> Output:
    table = memory_table(report)
    include_gaps = not args.no_gaps
    tiles = np.arange(table.num_tiles)
    if args.tiles:
        tiles = parse_tile_selection(args.tiles, table.num_tiles)
    if args.variables:
        shown = _variables_table(report, tiles)
    elif args.by_ipu:
        shown = _per_ipu_table(table, include_gaps)
    else:
        shown = _per_tile_table(table, tiles, include_gaps)
    out = Output([] if args.quiet else [shown], csv_table=shown)
    if args.max_percent is not None:
        over = table.over_limit(args.max_percent)
        if over.size:
            out.exit_code = 1
            out.message = (
                f"{len(over)} tile(s) above {args.max_percent:g}% of the {table.bytes_per_tile:,} "
                f"bytes of tile memory: {format_tile_selection(over)} (fullest: tile "
                f"{int(over[np.argmax(table.total()[over])])}, {int(table.total()[over].max()):,} "
                "bytes)"
            )
    return out


def _per_tile_table(table: MemoryTable, tiles: np.ndarray, include_gaps: bool) -> Table:
    rows = table.rows(include_gaps)[:, tiles]
    columns: dict = {"tile": tiles, "ipu": tiles // table.tiles_per_ipu}
    for row, category in zip(rows, table.categories(include_gaps), strict=True):
        columns[category_column(category.label)] = row
    total = rows.sum(axis=0)
    columns["total"] = total
    columns["percent_of_tile"] = np.round(100.0 * total / table.bytes_per_tile, 3)
    return Table("memory per tile", columns)


def _per_ipu_table(table: MemoryTable, include_gaps: bool) -> Table:
    per_ipu = table.per_ipu(include_gaps)
    columns: dict = {"ipu": np.arange(table.num_ipus)}
    for i, category in enumerate(table.categories(include_gaps)):
        columns[category_column(category.label)] = per_ipu[:, i]
    columns["total"] = per_ipu.sum(axis=1)
    return Table("memory per IPU", columns)


def _variables_table(report: Report, tiles: np.ndarray) -> Table:
    found = variables_on_tiles(report, tiles)
    return Table(
        "variables on tiles",
        {
            "variable": found.var,
            "name": found.names,
            "bytes_on_tiles": found.bytes,
            "bytes": found.total_bytes,
            "tiles": found.tiles,
            "always_live": found.always_live,
            "type": found.types,
            "shape": found.shapes,
            "debug_context": found.debug_names,
            "op": found.ops,
        },
    )


def liveness(report: Report, args: argparse.Namespace) -> Output:
    table = liveness_table(report)
    names = report.graph.strings
    if args.step is not None:
        live = variables_live_at(report, args.step)
        limit = slice(None, args.top)
        shown = Table(
            f"variables live at step {args.step}",
            {
                "variable": live.var[limit],
                "name": live.names[limit],
                "bytes": live.bytes[limit],
                "first_step": live.first[limit],
                "last_step": live.last[limit],
                "debug_context": live.debug_names[limit],
            },
        )
        return Output([shown])
    shown = Table(
        "live memory per program step",
        {
            "step": np.arange(table.num_steps),
            "kind": [StepKind(k).poplar_name for k in table.step_kind.tolist()],
            "name": names.take(table.step_name),
            "not_always_live_bytes": table.live_bytes(False),
            "live_bytes": table.live_bytes(True),
        },
        notes=[
            f"always-live bytes {table.always_live_bytes:,}; peak {table.peak_bytes:,} bytes at "
            f"step {table.peak_step}"
        ],
    )
    return Output(
        [shown],
        document={
            "always_live_bytes": table.always_live_bytes,
            "peak_step": table.peak_step,
            "peak_bytes": table.peak_bytes,
            "steps": shown,
        },
    )


def program_tree_command(report: Report, args: argparse.Namespace) -> Output:
    tree = program_tree(report, args.run)
    names = report.graph.strings.take(tree.name)
    depth = tree.depth.tolist()
    indented = ["  " * d + n for d, n in zip(depth, names, strict=True)]
    columns = {
        "node": np.arange(len(tree)),
        "parent": tree.parent,
        "depth": tree.depth,
        "kind": [ProgramKind(k).name.lower() for k in tree.kind.tolist()],
        "name": names,
        "steps": np.diff(tree.step_offsets),
        "executions": tree.executions,
        "cycles": tree.cycles,
        "self_cycles": tree.self_cycles,
    }
    plain = Table("program tree", columns)
    shown = Table("program tree", {**columns, "name": indented})
    return Output([shown], csv_table=plain, document={"program_tree": plain})


def execution(report: Report, args: argparse.Namespace) -> Output:
    if getattr(args, "blocks", False):
        return blocks_output(report, args)
    if args.step is not None:
        return Output([_balance_table(report, args.step, args.top)])
    if args.run is None:
        args.run = 0
    totals = run_totals(report)
    runs = Table(
        "runs",
        {
            "run": np.arange(len(totals)),
            "name": totals.names,
            "program": totals.program,
            "cycles": totals.cycles,
            "microseconds": np.round(totals.seconds * 1e6, 3),
            "steps": totals.steps,
        },
        notes=[] if len(totals) else ["the program was compiled but never run"],
    )
    if not len(totals):
        return Output([runs])
    breakdown = cycle_breakdown(report, args.run)
    used = np.flatnonzero(breakdown.executions_by_kind)
    total = max(int(breakdown.by_kind.sum()), 1)
    columns: dict = {
        "kind": [StepKind(k).poplar_name for k in used.tolist()],
        "executions": breakdown.executions_by_kind[used],
        "cycles": breakdown.by_kind[used],
        "percent": np.round(100.0 * breakdown.by_kind[used] / total, 2),
    }
    for ipu in range(breakdown.by_kind_ipu.shape[1]):
        columns[f"ipu{ipu}_active_cycles"] = breakdown.by_kind_ipu[used, ipu]
    kinds = Table(f"run {args.run} ({breakdown.name}) by step kind", columns)
    return Output([runs, _summary_table(report, args.run), kinds], csv_table=kinds)


def _summary_table(report: Report, run: int) -> Table:
    """Poplar's execution summary: tile-average cycles by category, share of the total."""
    summary = execution_summary(report, run)
    rows = [(TOTAL_LABEL, float(summary.total_cycles))]
    rows += [(label, value) for _, label, value in summary.rows()]
    cycles = [None if value is None else round(value, 1) for _, value in rows]
    percent = [None if value is None else round(summary.percent(value), 2) for _, value in rows]
    notes = [f"approx {summary.microseconds:,.1f} microseconds"]
    if summary.compute_excl is None:
        notes.append("this report does not record compute cycles excluding idle threads")
    return Table(
        f"execution summary of run {run} ({summary.name})",
        {"figure": [label for label, _ in rows], "cycles": cycles, "percent": percent},
        notes=notes,
    )


def _balance_table(report: Report, step: int, top: int | None) -> Table:
    balance = tile_balance(report, step)
    slowest = balance.slowest(top if top is not None else 10)
    return Table(
        f"slowest tiles of step {step} (compute set {balance.compute_set})",
        {"tile": balance.tiles[slowest], "cycles": balance.cycles[slowest]},
        notes=[
            f"{len(balance.tiles):,} tiles with vertices: min {balance.min:,}, mean "
            f"{balance.mean:,.1f}, max {balance.max:,} cycles"
        ],
    )
