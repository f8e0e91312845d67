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
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from profiler_core.cli.parser import PROG, build_parser
from profiler_core.errors import ReportError

if TYPE_CHECKING:
    from profiler_core.cli.output import Output

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_BUG, EXIT_CANNOT_WRITE = 0, 1, 2, 3, 4
EXIT_PARTIAL = 5


#: command -> (module, function), imported when the command runs: each command starts
#: without the others' imports (numpy and the readers, pyarrow, DuckDB, Dask)
_COMMANDS = {
    "summary": ("report_commands", "summary"),
    "memory": ("report_commands", "memory"),
    "liveness": ("report_commands", "liveness"),
    "program-tree": ("report_commands", "program_tree_command"),
    "operations": ("report_commands", "operations"),
    "execution": ("report_commands", "execution"),
    "insights": ("insights_command", "insights_command"),
    "compare": ("compare_command", "compare"),
}
#: the commands that open no report themselves: a trace, or many reports (or none: sweep)
_OWN_INPUTS = {
    "trace": ("trace_command", "trace_command"),
    "sweep": ("sweep_command", "sweep_command"),
    "runs": ("many_commands", "runs_command"),
    "sql": ("many_commands", "sql_command"),
    "export": ("many_commands", "export_command"),
}


def _command(module: str, function: str) -> Callable[..., Output]:
    return getattr(importlib.import_module(f"profiler_core.cli.{module}"), function)


def run(args: argparse.Namespace) -> Output:
    if args.command in _OWN_INPUTS:
        return _command(*_OWN_INPUTS[args.command])(args)
    from profiler_core.remote import RemoteReport, open_source

    command = _command(*_COMMANDS[args.command])
    # A command reads the few sections it needs, once: the others are not held.
    names = [args.A, args.B] if args.command == "compare" else [args.REPORT]
    reports = [open_source(name, on_demand=True) for name in names]
    output = command(*reports, args)
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
