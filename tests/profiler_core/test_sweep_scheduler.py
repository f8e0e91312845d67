"""A sweep on a real Dask cluster: a ``dask scheduler`` and two ``dask worker`` processes
started here on loopback (random free ports), torn down afterwards; and a scheduler that is
not there, which is a clear error within 10 s."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT
from tests.profiler_core.test_sweep_local import cli

START_SECONDS = 60


def _dask(*args: str, log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # the workers import profiler_core.runs
    with open(log, "wb") as stream:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            env=env,
            stdout=stream,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_for(what: str, done, processes, logs) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not done():
        dead = [log for p, log in zip(processes, logs, strict=True) if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            texts = "\n".join(log.read_text(errors="replace")[-2000:] for log in logs)
            pytest.fail(f"{what} did not start:\n{texts}")
        time.sleep(0.1)


@pytest.fixture
def dask_cluster(tmp_path):
    """``dask scheduler`` + two single-thread ``dask worker`` processes on 127.0.0.1."""
    from distributed import Client

    info = tmp_path / "scheduler.json"
    logs = [tmp_path / f"{name}.log" for name in ("scheduler", "worker1", "worker2")]
    processes = [
        _dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(info), log=logs[0]),
    ]  # fmt: skip
    try:
        _wait_for("the scheduler", info.exists, processes, logs[:1])
        for i in (1, 2):
            processes.append(
                _dask("worker", "--scheduler-file", str(info), "--nthreads", "1",
                      "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}",
                      "--no-nanny", log=logs[i])
            )  # fmt: skip
        address = json.loads(info.read_text())["address"]
        with Client(address, timeout="20s", set_as_default=False) as client:
            client.wait_for_workers(2, timeout=START_SECONDS)
            workers = set(client.scheduler_info(n_workers=-1)["workers"])
        yield address, workers
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_a_sweep_runs_on_a_dask_scheduler_and_its_workers(dask_cluster, tmp_path):
    address, workers = dask_cluster
    assert address.startswith("tcp://127.0.0.1:")
    out = tmp_path / "sweep"
    result = cli(
        "sweep", "--scheduler", address, "--out", out, "--",
        EXAMPLES / "tutorial6_matrix_vector.py", "{rows=40,80}", "10",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"on scheduler {address} (2 worker(s))" in result.stdout
    record = json.loads((out / "sweep.json").read_text())
    assert record["cluster"] == f"scheduler {address} (2 worker(s))"
    runs = record["runs"]
    assert [r["status"] for r in runs] == ["ok", "ok"]
    assert {r["worker"] for r in runs} <= workers  # run by the dask worker processes
    assert all(r["host"] == socket.gethostname() for r in runs)
    for run in runs:
        assert (out / run["name"] / "engine" / "profile.pop").is_file()
    rows = json.loads(cli("runs", "--json", out).stdout)["runs"]
    assert [(r["rows"], r["fits"]) for r in rows] == [(40, True), (80, True)]


@pytest.mark.parametrize("listening", [False, True])
def test_an_unreachable_scheduler_is_a_clear_error_within_ten_seconds(tmp_path, listening):
    """Nothing at the port (refused at once), or something that accepts the connection and
    never speaks Dask (the client's timeout, 4 s)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        if listening:
            silent.listen()
        port = silent.getsockname()[1]
        if not listening:
            silent.close()
        script = tmp_path / "noop.py"
        script.write_text("pass\n")
        started = time.monotonic()
        result = cli("sweep", "--scheduler", f"127.0.0.1:{port}", "--out", tmp_path / "o",
                     "--", script, "{1,2}")  # fmt: skip
        seconds = time.monotonic() - started
    assert result.returncode == 2
    reason = "within 4 s (no answer)" if listening else "(Connection refused)"
    assert result.stderr.startswith(
        f"popvision-cli: cannot reach the Dask scheduler at tcp://127.0.0.1:{port} {reason}"
    )
    assert result.stderr.endswith("is `dask scheduler` running there?\n")
    assert seconds < 10
    assert not (tmp_path / "o" / "sweep.json").exists()  # nothing recorded: nothing ran
