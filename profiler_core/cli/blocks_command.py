"""``popvision-cli execution --blocks``: lightweight profiling's executions, one row per
execution of a block on one IPU (runs x blocks), then each block's totals."""

from __future__ import annotations

import argparse

import numpy as np

from profiler_core.analysis.blocks import BlockExecutions, block_executions, block_totals
from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table
from profiler_core.model.kinds import BlockKind
from profiler_core.report import Report

NO_BLOCKS = (
    "this report has no lightweight-profiling blocks: run the program with the engine option "
    "profiler.blocks.filter (Block programs) or profiler.programs.filter (any program) set"
)


def blocks_output(report: Report, args: argparse.Namespace) -> Output:
    executions = block_executions(report)
    if executions is None:
        empty = Table("blocks", {"run": [], "block": []}, notes=[NO_BLOCKS])
        return Output([empty], message=NO_BLOCKS)
    rows = np.arange(len(executions))
    if args.run is not None:
        if not 0 <= args.run < len(executions.run_names):
            raise IndexError(
                f"there is no run {args.run}; the blocks are of {len(executions.run_names)} run(s)"
            )
        rows = np.flatnonzero(executions.run == args.run)
    names = executions.names()
    kinds = [BlockKind(int(k)).label for k in executions.kind.tolist()]
    columns = {
        "run": executions.run[rows],
        "block": [names[r] for r in rows.tolist()],
        "kind": [kinds[r] for r in rows.tolist()],
        "execution": executions.index[rows],
        "ipu": executions.ipu[rows],
        "tile": executions.tile[rows],
        "start": executions.start[rows],
        "end": executions.end[rows],
        "cycles": executions.cycles[rows],
        "depth": executions.depth[rows],
    }
    listed = Table("blocks", columns, notes=_notes(executions, rows))
    indented = [
        "  " * d + n for d, n in zip(executions.depth[rows].tolist(), columns["block"], strict=True)
    ]
    shown = Table("blocks", {**columns, "block": indented}, notes=listed.notes)
    totals = _totals_table(executions)
    return Output(
        [shown, totals],
        csv_table=listed,
        document={"blocks": listed, "block_totals": totals},
    )


def _notes(executions: BlockExecutions, rows: np.ndarray) -> list[str]:
    runs = len(executions.run_names)
    first = f"{len(rows):,} executions of {len(executions.block_names):,} blocks in {runs} run(s)"
    return [
        f"{first}, timed on tile {executions.tile_per_ipu} of each IPU (a StreamCopy on the "
        "tile its data is on); cycles count from the engine's load, runs one after another"
    ]


def _totals_table(executions: BlockExecutions) -> Table:
    totals = block_totals(executions)
    labels = [executions.label(int(np.flatnonzero(executions.block == b)[0])) for b in totals.block]
    kinds = [BlockKind(int(executions.block_kinds[b])).label for b in totals.block.tolist()]
    return Table(
        "block totals",
        {
            "block": labels,
            "kind": kinds,
            "ipu": totals.ipu,
            "executions": totals.executions,
            "total_cycles": totals.total,
            "min_cycles": totals.shortest,
            "mean_cycles": np.round(totals.mean, 1),
            "max_cycles": totals.longest,
        },
    )
