"""Running a sweep: every run of a plan that ``sweep.json`` does not hold as finished is
submitted to the Dask cluster; each row is recorded as its run ends, so an interrupt (Ctrl+C,
SIGTERM) keeps what finished, stops the runs under way and leaves them to the next time.
"""

from __future__ import annotations

import contextlib
import fcntl
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiler_core.runs.cluster import CONNECT_SECONDS, sweep_client
from profiler_core.runs.errors import SweepError
from profiler_core.runs.execute import run_one
from profiler_core.runs.plan import SweepPlan
from profiler_core.runs.record import FINISHED, SweepRecord, start_record

STOP_GRACE_SECONDS = 20.0  # for the runs under way to stop when interrupted
LOCK_FILE = ".sweep.lock"

Progress = Callable[[dict[str, Any], int, int], None]
"""``progress(row, done, total)`` after each run ends."""


@dataclass
class SweepOutcome:
    record: SweepRecord
    planned: int
    skipped: int  # finished in an earlier sweep of the same command
    rows: list[dict[str, Any]] = field(default_factory=list)  # this time's runs, as they ended
    interrupted: bool = False
    cluster: str = ""

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["status"] != "ok"]


def run_sweep(
    plan: SweepPlan,
    out: Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    run_timeout: float | None = None,
    retry_failed: bool = False,
    connect_seconds: float = CONNECT_SECONDS,
    progress: Progress | None = None,
) -> SweepOutcome:
    """Run the plan's runs not yet finished in ``out`` on a LocalCluster of ``workers``
    (default: one per core) or on the scheduler at ``scheduler``."""
    parameters = {p.name: list(p.values) for p in plan.parameters}
    start_record(out, plan.shape, parameters)  # refuses a report folder, another command's
    with _only_sweep_in(out):
        record = start_record(out, plan.shape, parameters)  # as the last sweep there left it
        cluster = (workers, scheduler, connect_seconds)
        return _run_unfinished(plan, record, cluster, run_timeout, retry_failed, progress)


def _run_unfinished(
    plan: SweepPlan,
    record: SweepRecord,
    cluster: tuple[int | None, str | None, float],
    run_timeout: float | None,
    retry_failed: bool,
    progress: Progress | None,
) -> SweepOutcome:
    order = {run.name: i for i, run in enumerate(plan.runs)}
    todo = [r for r in plan.runs if not record.finished(r.name, r.key, retry_failed)]
    outcome = SweepOutcome(record, len(plan.runs), len(plan.runs) - len(todo))
    if not todo:
        record.save()
        return outcome
    with sweep_client(*cluster) as (client, described):
        outcome.cluster = record.cluster = described
        record.save()  # the folder says it is a sweep from the start
        with client.as_current():  # as_completed and wait find their client so
            _submit_and_record(client, todo, outcome, order, run_timeout, progress)
    return outcome


@contextlib.contextmanager
def _only_sweep_in(out: Path) -> Iterator[None]:
    """One sweep at a time writes ``out``: a second one there is refused (the first holds a
    lock on ``out/.sweep.lock`` until it ends, however it ends)."""
    lock = open(out / LOCK_FILE, "a+b")  # noqa: SIM115 - held until the sweep ends
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError("another sweep is running into this folder", out) from None
        yield
    finally:
        lock.close()


def _submit_and_record(
    client: Any,
    todo: list,
    outcome: SweepOutcome,
    order: dict[str, int],
    run_timeout: float | None,
    progress: Progress | None,
) -> None:
    from distributed import Event, as_completed, wait

    from profiler_core.runs.order import LongestFirst  # numpy: not for `--help`

    sweep_id = uuid.uuid4().hex[:12]
    cancel = Event(f"popvision-sweep-{sweep_id}", client=client)
    # Runs are handed out one per free worker thread, longest predicted first (order.py),
    # rather than all queued in the plan's order: a sweep over sizes would end with its
    # largest run alone on one worker.
    waiting = LongestFirst(todo)
    futures: list[Any] = []
    by_key: dict[str, Any] = {}
    started = as_completed()

    def start_more() -> None:
        under_way = len(futures) - len(outcome.rows)
        for _ in range(min(_worker_threads(client) - under_way, len(waiting))):
            run = waiting.pop()
            future = client.submit(
                run_one,
                run.to_dict(),
                cancel.name,
                run_timeout,
                key=f"popvision-run-{sweep_id}-{len(futures)}",
                pure=False,
            )
            futures.append(future)
            by_key[future.key] = run
            started.add(future)

    try:
        start_more()
        for future in started:
            run = by_key[future.key]
            row = _row_of(future, run)
            _keep(outcome, row, order)
            waiting.ended(run, row["wall_seconds"])
            start_more()
            if progress is not None:
                progress(row, len(outcome.rows), len(todo))
    except KeyboardInterrupt:
        outcome.interrupted = True
        # Runs under way stop, all without a row, and no more start; none is cancelled in
        # Dask, which would leave a run's process behind its worker's back.
        cancel.set()
        under_way = [f for f in futures if not f.done()]
        with contextlib.suppress(Exception):
            wait(under_way, timeout=STOP_GRACE_SECONDS)
        for future in under_way:  # a run that ended by itself meanwhile is kept
            if future.status == "finished":
                row = future.result()
                if row["status"] in FINISHED:
                    _keep(outcome, row, order)
        outcome.record.save()


def _worker_threads(client: Any) -> int:
    """The threads of the cluster's workers now (at least one: a scheduler whose workers
    have not joined yet queues the run)."""
    try:
        return max(sum(client.nthreads().values()), 1)
    except Exception:  # the scheduler went away: the run's future says so
        return 1


def _row_of(future: Any, run: Any) -> dict[str, Any]:
    try:
        return future.result()
    except Exception as error:  # the worker died or the task could not run there
        return {
            "name": run.name,
            "values": run.values,
            "key": run.key,
            "command": run.argv,
            "status": "lost",
            "exit_code": None,
            "error": f"the Dask worker could not run it ({type(error).__name__}: {error})",
            "wall_seconds": None,
            "run_folder": run.folder,
            "reports": [],
            "host": "",
            "worker": "",
        }


def _keep(outcome: SweepOutcome, row: dict[str, Any], order: dict[str, int]) -> None:
    outcome.rows.append(row)
    if row["status"] not in FINISHED:  # lost with its worker: it runs again next time
        return
    record = outcome.record
    record.add(row)
    record.runs = dict(sorted(record.runs.items(), key=lambda item: order.get(item[0], len(order))))
    record.save()
