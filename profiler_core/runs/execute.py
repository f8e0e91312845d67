"""One run of a sweep, as a Dask worker does it: the command as a child process of its own
(its output in the run's folder), watched until it ends, times out or the sweep is
interrupted, and what happened as a plain row of ``sweep.json``.

Imported by the workers by name, so it needs only the standard library and ``distributed``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

STDOUT_FILE, STDERR_FILE = "stdout.txt", "stderr.txt"
#: one thread per numerical library in each run, as Dask's own worker processes get, unless
#: the user's environment says otherwise: runs side by side on a worker's cores must not
#: each wake a thread per core (OpenBLAS waits for all of them at every product)
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
POLL_SECONDS = 0.2
_ERROR_CHARS = 500


def run_one(
    spec: dict[str, Any], cancel_event: str | None = None, timeout: float | None = None
) -> dict[str, Any]:
    """Run ``spec`` (a ``RunSpec.to_dict()``); returns its row. ``cancel_event`` names a
    ``distributed.Event`` that, once set, stops the run (status ``cancelled``)."""
    cancelled = _cancel_check(cancel_event)
    row = {k: spec[k] for k in ("name", "values", "key")}
    row |= {"command": spec["argv"], "engine_options": spec["engine_options"]}
    row |= {"run_folder": spec["folder"], "host": socket.gethostname(), "worker": _worker()}
    if cancelled():  # queued when the sweep was interrupted: it never starts
        return row | _ended(time.time(), "cancelled", None, "not started: interrupted")
    folder = Path(spec["folder"])
    if folder.exists():  # what an interrupted attempt left: this run starts afresh
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    env = dict(os.environ)
    for name in ONE_THREAD:
        env.setdefault(name, "1")
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps(_engine_options(spec["engine_options"]))
    started = time.time()
    try:
        with open(folder / STDOUT_FILE, "wb") as out, open(folder / STDERR_FILE, "wb") as err:
            child = subprocess.Popen(
                spec["argv"],
                cwd=spec["cwd"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # an interrupt is the sweep's to pass on, not the tty's
            )
    except OSError as error:
        return row | _ended(started, "failed", None, f"cannot start: {error.strerror or error}")
    status = _watch(child, cancelled, timeout)
    error = ""
    if status == "timeout":
        error = f"stopped after the run timeout of {timeout:g} s"
    elif status == "cancelled":
        error = "stopped: the sweep was interrupted"
    elif child.returncode != 0:
        status = "failed"
        error = _last_error(folder / STDERR_FILE) or f"exit code {child.returncode}"
    row |= _ended(started, status, child.returncode, error)
    row["reports"] = report_folders(folder)
    if status == "ok" and not row["reports"]:
        row["error"] = "the command wrote no report (does it compile an Engine?)"
    return row


def report_folders(folder: Path) -> list[str]:
    """The report folders a run wrote, relative to its folder, in name order."""
    return sorted(str(p.parent.relative_to(folder)) for p in folder.rglob("profile.pop"))


def _engine_options(sweep_options: dict[str, str]) -> dict[str, str]:
    """The user's own POPLAR_ENGINE_OPTIONS under the sweep's (which decide the folder)."""
    try:
        own = json.loads(os.environ.get("POPLAR_ENGINE_OPTIONS", "") or "{}")
    except ValueError:
        own = {}
    return {**(own if isinstance(own, dict) else {}), **sweep_options}


def _watch(child: subprocess.Popen, cancelled: Any, timeout: float | None) -> str:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            child.wait(POLL_SECONDS)
            return "ok"
        except subprocess.TimeoutExpired:
            pass
        if deadline is not None and time.monotonic() > deadline:
            _stop(child)
            return "timeout"
        if cancelled():
            _stop(child)
            return "cancelled"


def _stop(child: subprocess.Popen) -> None:
    """Terminate the child's whole process group, then kill it after a grace period."""
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, sig)
        try:
            child.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _cancel_check(name: str | None) -> Any:
    if name is None:
        return lambda: False
    from distributed import Event

    event = Event(name)
    return lambda: _is_set(event)


def _is_set(event: Any) -> bool:
    try:
        return bool(event.is_set())
    except Exception:  # the scheduler went away: the sweep is over, stop the run
        return True


def _worker() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return ""


def _ended(started: float, status: str, code: int | None, error: str) -> dict[str, Any]:
    return {
        "status": status,
        "exit_code": code,
        "error": error,
        "started": started,
        "wall_seconds": round(time.time() - started, 3),
    }


def _last_error(path: Path) -> str:
    """The line of stderr that says what went wrong: Poplar's out-of-memory line when there
    is one, else the last line that is not blank."""
    try:
        with open(path, "rb") as stream:
            stream.seek(max(path.stat().st_size - 65536, 0))
            lines = stream.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    lines = [line.strip() for line in lines if line.strip()]
    oom = [line for line in lines if "Out of memory on tile" in line]
    chosen = (oom or lines or [""])[-1]
    return chosen[:_ERROR_CHARS]
