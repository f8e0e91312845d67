"""``popvision-cli sweep``: makes the sweep's plan from the arguments, runs it on a Dask
cluster with progress on stderr, and prints one row per run (what the command does for the
user is ``parser.SWEEP_DESCRIPTION``, its help)."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table
from profiler_core.runs import SweepOutcome, make_plan, run_sweep
from profiler_core.runs.errors import SweepError

NO_SETS = (
    "COMMAND holds no {a,b} set, so the sweep is one run; a shell expands sets that are not "
    "quoted: write '{100,200}'"
)


def sweep_command(args: argparse.Namespace) -> Output:
    command = list(args.COMMAND)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.max_runs < 1:
        raise SweepError(f"--max-runs must be at least 1, not {args.max_runs}")
    plan = make_plan(command, args.engine_option, args.out, args.max_runs)
    if args.dry_run:
        rows = [{**r.to_dict(), "status": "planned", "command": r.argv} for r in plan.runs]
        planned = _output(rows, [p.name for p in plan.parameters], "planned runs")
        planned.notes += [] if plan.parameters else [NO_SETS]
        return planned
    with _sigterm_interrupts():
        outcome = run_sweep(
            plan,
            args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            run_timeout=args.run_timeout,
            retry_failed=args.retry_failed,
            progress=_print_progress,
        )
    out = _outcome_output(outcome, [p.name for p in plan.parameters])
    if not plan.parameters:
        out.notes.append(NO_SETS)
    return out


def _outcome_output(outcome: SweepOutcome, names: list[str]) -> Output:
    record = outcome.record
    out = _output(list(record.runs.values()), names, f"sweep of {outcome.planned} run(s)")
    done = sum(1 for r in record.runs.values() if r.get("status") == "ok")
    where = f" on {outcome.cluster}" if outcome.cluster else ""
    ran = f"{len(outcome.rows)} ran now"
    out.header = [
        ("Sweep", str(record.folder)),
        ("Runs", f"{outcome.planned} planned, {outcome.skipped} finished before, {ran}{where}"),
        ("Record", str(record.path)),
    ]
    failed = [r for r in record.runs.values() if r.get("status") != "ok"]
    if outcome.interrupted:
        out.exit_code = 130
        out.message = (
            f"interrupted: {len(record.runs)} of {outcome.planned} runs are finished and kept "
            f"in {record.path}; run the same command again to do the rest"
        )
    elif failed:
        out.exit_code = 1
        out.message = f"{len(failed)} of {outcome.planned} runs failed ({done} ok): see 'error'"
    return out


def _output(rows: list[dict[str, Any]], names: list[str], title: str) -> Output:
    columns: dict[str, list] = {"run": [r["name"] for r in rows]}
    for name in names:
        columns[name] = [r.get("values", {}).get(name, "") for r in rows]
    columns["status"] = [r.get("status", "") for r in rows]
    columns["exit_code"] = [r.get("exit_code") for r in rows]
    columns["wall_seconds"] = [r.get("wall_seconds") for r in rows]
    columns["host"] = [r.get("host", "") for r in rows]
    columns["reports"] = [" ".join(r.get("reports", [])) for r in rows]
    columns["error"] = [r.get("error", "") for r in rows]
    table = Table(title, columns)
    return Output([table], document={"runs": rows})


def _print_progress(row: dict[str, Any], done: int, total: int) -> None:
    where = f" on {row['host']}" if row.get("host") else ""
    seconds = row.get("wall_seconds")
    took = f" in {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
    error = f": {row['error']}" if row.get("error") else ""
    print(f"[{done}/{total}] {row['name']}: {row['status']}{took}{where}{error}", file=sys.stderr)


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops the sweep as Ctrl+C does: what finished is kept."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (a caller's thread): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
