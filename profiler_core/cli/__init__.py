"""``popvision-cli``: report summaries, memory, liveness, program tree, operations, execution
and comparisons as aligned text tables, ``--json`` or ``--csv``, for people and CI.

Exit codes: 0 done; 1 a check failed (``memory --max-percent``, ``insights --fail-on``);
2 the input is wrong (a file that cannot be read, a bad argument), with one line on stderr
naming the file and the problem; 3 a bug in popvision-cli itself, also one line; 4 the
output could not be written (a full disk, a file size limit), so what was written is
incomplete; 5 done, but the input is partial -- a report whose debug.cbor belongs to another
run or cannot be read, a damaged section, a trace cut short, still being written, or written
under a failed writer -- with a ``warning:`` line on stderr for each problem (what could be
read is printed). A report file written before checksums (profile.pop 1.1, debug.cbor 2.0
or 1) adds a ``note:`` line saying damage to it cannot be detected; the exit status stays.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from profiler_core.analysis.debug_groups import GROUPINGS
from profiler_core.analysis.operation_index import OPERATION_GROUPINGS
from profiler_core.cli import report_commands as commands
from profiler_core.cli.compare_command import compare
from profiler_core.cli.insights_command import insights_command
from profiler_core.cli.many_commands import (
    add_many_parsers,
    export_command,
    runs_command,
    sql_command,
)
from profiler_core.cli.output import Output
from profiler_core.cli.sweep_command import add_sweep_parser, sweep_command
from profiler_core.cli.trace_command import trace_command
from profiler_core.errors import ReportError
from profiler_core.remote import RemoteReport, open_source

PROG = "popvision-cli"
TRACE_HELP = "a host trace's tracks and event counts; says when it is incomplete"
EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_BUG, EXIT_CANNOT_WRITE = 0, 1, 2, 3, 4
EXIT_PARTIAL = 5


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
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


_COMMANDS = {
    "summary": commands.summary,
    "memory": commands.memory,
    "liveness": commands.liveness,
    "program-tree": commands.program_tree_command,
    "operations": commands.operations,
    "execution": commands.execution,
    "insights": insights_command,
}
#: the commands over many reports (or none: sweep): each takes its own arguments
_MANY_REPORTS = {
    "sweep": sweep_command,
    "runs": runs_command,
    "sql": sql_command,
    "export": export_command,
}


def run(args: argparse.Namespace) -> Output:
    if args.command == "trace":
        return trace_command(args)
    if args.command in _MANY_REPORTS:
        return _MANY_REPORTS[args.command](args)
    if args.command == "compare":
        reports = [open_source(args.A, on_demand=True), open_source(args.B, on_demand=True)]
        output = compare(*reports, args)
    else:
        # A command reads the few sections it needs, once: the others are not held.
        reports = [open_source(args.REPORT, on_demand=True)]
        output = _COMMANDS[args.command](reports[0], args)
    for report in reports:  # every command says when its report is partial, the same way
        output.warnings += [w for w in report.warnings() if w not in output.warnings]
        output.notes += [n for n in report.notes() if n not in output.notes]
        if isinstance(report, RemoteReport):  # its files are fetched: the connection goes
            report.remote.close()
    return output


def _write_all(text: str) -> None:
    """Write ``text`` to stdout, raising OSError unless every byte was written: Python's
    buffered stdout drops the rest of a write cut short by a file size limit silently."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a captured or replaced stdout
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    sys.stdout.flush()
    data = memoryview(text.encode(sys.stdout.encoding or "utf-8", errors="replace"))
    while data:
        data = data[os.write(fd, data) :]


def _discard_stdout() -> None:
    """Drop what is still buffered for stdout, so the exit does not fail writing it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (the console script exits with it)."""
    args = build_parser().parse_args(argv)
    try:
        output = run(args)
        for piece in output.render_pieces(args.form or "text"):
            _write_all(piece)
    except ReportError as error:
        return _fail(str(error), EXIT_BAD_INPUT)
    except (IndexError, ValueError) as error:  # a run, step or tile the report lacks
        return _fail(str(error), EXIT_BAD_INPUT)
    except BrokenPipeError:  # `popvision-cli memory ... | head` closed its end: not an error
        sys.stderr.close()
        return EXIT_OK
    except OSError as error:  # a full disk or /dev/full: a truncated file must not pass as done
        _discard_stdout()
        reason = error.strerror or str(error)
        return _fail(f"cannot write the output: {reason}", EXIT_CANNOT_WRITE)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as error:
        return _fail(
            f"internal error ({type(error).__name__}: {error}); please report it", EXIT_BUG
        )
    if output.message:
        print(f"{PROG}: {output.message}", file=sys.stderr)
    for warning in output.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    for note in output.notes:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    return output.exit_code or (EXIT_PARTIAL if output.warnings else EXIT_OK)


def _fail(message: str, code: int) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return code
