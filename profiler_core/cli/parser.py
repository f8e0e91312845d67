"""The arguments of every ``popvision-cli`` command. Only the standard library and a few
names are imported here: a command's own modules (numpy, the readers, pyarrow, DuckDB, Dask)
are imported when that command runs, so each starts without the others' imports."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from profiler_core.analysis.groupings import GROUPINGS, OPERATION_GROUPINGS
from profiler_core.runs.sets import MAX_RUNS
from profiler_core.tables.names import TABLES

PROG = "popvision-cli"
DESCRIPTION = (
    "``popvision-cli``: report summaries, memory, liveness, program tree, operations, execution"
)
TRACE_HELP = "a host trace's tracks and event counts; says when it is incomplete"
SWEEP_HELP = "run a command once per combination of its {a,b} sets on a Dask cluster"
SWEEP_DESCRIPTION = """\
``popvision-cli sweep [--workers N | --scheduler ADDRESS] --out DIR -- COMMAND ...``: every
combination of the ``{a,b,c}`` sets in COMMAND (and in ``--engine-option KEY={v1,v2}``) run
once as its own process on a Dask cluster, each writing its report into ``DIR/<run>/``;
``DIR/sweep.json`` records what ran. Exit 1 when a run failed (its row says why), 130 when
interrupted (what finished is kept: the same command again does the rest)."""
RUNS_HELP = "one row per report: sweep values, cycles, peak live memory, does it fit"
SQL_HELP = "a SELECT over the tables of many reports (DuckDB, read-only)"
EXPORT_HELP = "the tables of many reports as Parquet files"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, reports: int = 1) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        for which in ("A", "B")[:reports] if reports > 1 else ("REPORT",):
            p.add_argument(
                which, help="a report folder or its profile.pop (or ssh://user@host/path)"
            )
        form = p.add_mutually_exclusive_group()
        form.add_argument("--json", action="store_const", const="json", dest="form")
        form.add_argument("--csv", action="store_const", const="csv", dest="form")
        return p

    command("summary", "program, target, memory totals, peak liveness and cycles")
    p = command("memory", "memory per tile by category (or per IPU, or variables on tiles)")
    p.add_argument("--tiles", help="only these tiles, e.g. 0,5,100-120")
    p.add_argument("--by-ipu", action="store_true", help="one row per IPU")
    p.add_argument("--variables", action="store_true", help="variables on the tiles instead")
    p.add_argument("--no-gaps", action="store_true", help="leave out the gap categories")
    p.add_argument(
        "--max-percent",
        type=float,
        metavar="P",
        help="exit with 1, naming the tiles, when any tile uses more than P%% of tile memory",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print no table (with --max-percent)")
    p = command("liveness", "live memory per program step, or the variables live at one")
    p.add_argument("--step", type=int, help="list the variables live during this step")
    p.add_argument("--top", type=int, help="at most this many variables")
    p = command("program-tree", "the program tree with steps, executions and cycles")
    p.add_argument("--run", type=int, help="cycles of this run only (default: every run)")
    p = command("operations", "cycles, vertices, code, memory and FLOPs per operation")
    p.add_argument("--group-by", choices=OPERATION_GROUPINGS, default="op")
    p.add_argument("--run", type=int, help="cycles of this run only (default: every run)")
    p = command("execution", "runs, cycles by step kind and IPU, or the balance of a step")
    p.add_argument("--run", type=int, help="the run to break down (default 0; --blocks: all)")
    p.add_argument("--step", type=int, help="the tile balance of this compute step")
    p.add_argument("--top", type=int, help="how many of the slowest tiles (default 10)")
    p.add_argument(
        "--blocks",
        action="store_true",
        help="lightweight profiling: every execution of each timed block, and their totals",
    )
    p = command("insights", "does it fit, why not, and what to change: findings with evidence")
    p.add_argument(
        "--fail-on",
        choices=("info", "warning", "error"),
        help="exit with 1 when a finding of this severity or worse is present",
    )
    p.add_argument(
        "--what-if",
        action="store_true",
        help="re-plan each suggestion with the engine (needs the report's serialized graph: "
        "autoReport.outputSerializedGraph) and show its predicted figures",
    )
    p = command("compare", "two reports side by side with differences (B minus A)", reports=2)
    p.add_argument("--group-by", choices=GROUPINGS, default="name")
    p.add_argument("--variables", action="store_true", help="also variables matched by name")
    p.add_argument("--steps", action="store_true", help="also program steps matched by name")
    p = sub.add_parser("trace", help=TRACE_HELP, description=TRACE_HELP)
    p.add_argument(
        "TRACE",
        help="a .pvti file, a folder of them, or Chrome trace JSON (plain or gzip), or "
        "ssh://user@host/path of one",
    )
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_const", const="json", dest="form")
    form.add_argument("--csv", action="store_const", const="csv", dest="form")
    add_sweep_parser(sub)
    add_many_parsers(sub)
    return parser


def add_sweep_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help=SWEEP_HELP, description=SWEEP_DESCRIPTION)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="LocalCluster workers (default: one per core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running `dask scheduler`")
    p.add_argument("--out", type=Path, required=True, help="the sweep's folder")
    p.add_argument(
        "--engine-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a POPLAR_ENGINE_OPTIONS key for every run; VALUE may be a set {v1,v2}",
    )
    p.add_argument("--max-runs", type=int, default=MAX_RUNS, help=f"default {MAX_RUNS:,}")
    p.add_argument("--run-timeout", type=float, metavar="S", help="stop a run after S seconds")
    p.add_argument("--retry-failed", action="store_true", help="run failed runs again too")
    p.add_argument("--dry-run", action="store_true", help="list the runs, run nothing")
    p.add_argument("--json", action="store_const", const="json", dest="form")
    p.add_argument("COMMAND", nargs=argparse.REMAINDER, help="-- the program and its arguments")


def add_many_parsers(sub: Any) -> None:
    paths_help = "report folders, sweeps (--out of sweep) or folders holding reports"
    p = sub.add_parser("runs", help=RUNS_HELP, description=RUNS_HELP)
    p.add_argument("PATHS", nargs="+", help=paths_help)
    _forms(p)
    p = sub.add_parser("sql", help=SQL_HELP, description=f"{SQL_HELP}; tables: {TABLES}")
    p.add_argument("QUERY", help="e.g. SELECT report, total_cycles FROM reports")
    p.add_argument("PATHS", nargs="+", help=f"{paths_help}, or Parquet folders from export")
    p.add_argument("--timeout", type=float, metavar="S", help="stop the query after S seconds")
    _forms(p)
    p = sub.add_parser("export", help=EXPORT_HELP, description=EXPORT_HELP)
    p.add_argument("--parquet", type=Path, required=True, metavar="OUT", help="a folder")
    p.add_argument("--tables", help=f"some of {','.join(TABLES)} (default: all)")
    p.add_argument("PATHS", nargs="+", help=paths_help)
    p.add_argument("--json", action="store_const", const="json", dest="form")


def _forms(p: argparse.ArgumentParser) -> None:
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_const", const="json", dest="form")
    form.add_argument("--csv", action="store_const", const="csv", dest="form")
