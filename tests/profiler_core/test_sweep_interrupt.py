"""A sweep interrupted (Ctrl+C, SIGTERM) keeps the runs that finished, stops the ones under
way (their processes are gone), and the same command run again does only the rest; a run
past ``--run-timeout`` is stopped and is a row saying so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.profiler_core.test_sweep_local import cli

SLEEPER = Path(__file__).with_name("sweep_sleeper.py")
COMMAND = ["--", SLEEPER, "{t=0.1,0.2,30,31}"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _pid(out: Path, run: str) -> int | None:
    text = (out / run / "stdout.txt").read_text() if (out / run / "stdout.txt").exists() else ""
    return int(text.split()[0]) if text.strip() else None


def _finished(out: Path) -> list[str]:
    try:
        return [r["name"] for r in json.loads((out / "sweep.json").read_text())["runs"]]
    except (OSError, ValueError):
        return []


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_sweep_keeps_what_finished_and_resumes_the_rest(tmp_path, how):
    out = tmp_path / "sweep"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # the two slow runs start first (longest first), the fast ones one after the other on
    # the third worker
    argv = [sys.executable, "-m", "profiler_core.cli", "sweep", "--workers", "3", "--out"]
    sweep = subprocess.Popen(
        [*argv, str(out), *map(str, COMMAND)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    slow = ["t=30", "t=31"]
    while not (len(_finished(out)) == 2 and all(_pid(out, r) for r in slow)):
        assert sweep.poll() is None, sweep.communicate()
        assert time.monotonic() < deadline, "the fast runs did not finish"
        time.sleep(0.05)
    pids = [_pid(out, r) for r in slow]
    assert all(_alive(p) for p in pids)
    interrupted = time.monotonic()
    sweep.send_signal(how)
    stdout, stderr = sweep.communicate(timeout=60)
    assert time.monotonic() - interrupted < 15
    assert sweep.returncode == 130, stderr
    assert "interrupted: 2 of 4 runs are finished and kept" in stderr
    assert "run the same command again to do the rest" in stderr
    assert _finished(out) == ["t=0.1", "t=0.2"]
    assert not any(_alive(p) for p in pids)  # the runs under way were stopped
    kept = json.loads((out / "sweep.json").read_text())["runs"]

    resumed = dict(os.environ, PYTHONPATH=str(ROOT), SLEEP_SCALE="0")
    again = subprocess.run(
        [*argv, str(out), *map(str, COMMAND)], env=resumed, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "4 planned, 2 finished before, 2 ran now" in again.stdout
    runs = json.loads((out / "sweep.json").read_text())["runs"]
    assert [r["name"] for r in runs] == ["t=0.1", "t=0.2", "t=30", "t=31"]
    assert runs[:2] == kept  # not run again
    assert [r["status"] for r in runs] == ["ok"] * 4
    assert all(r["error"] == "the command wrote no report (does it compile an Engine?)"
               for r in runs)  # fmt: skip


def test_a_run_past_its_timeout_is_stopped_and_said(tmp_path):
    out = tmp_path / "sweep"
    started = time.monotonic()
    result = cli("sweep", "--workers", "2", "--run-timeout", "1", "--out", out, "--", SLEEPER,
                 "{t=0.1,60}", cwd=tmp_path)  # fmt: skip
    assert time.monotonic() - started < 30
    assert result.returncode == 1
    runs = {r["name"]: r for r in json.loads((out / "sweep.json").read_text())["runs"]}
    assert runs["t=0.1"]["status"] == "ok"
    slow = runs["t=60"]
    assert slow["status"] == "timeout"
    assert slow["error"] == "stopped after the run timeout of 1 s"
    assert not _alive(_pid(out, "t=60"))


def test_a_second_sweep_into_the_same_folder_is_refused_while_the_first_runs(tmp_path):
    out = tmp_path / "sweep"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "profiler_core.cli", "sweep", "--workers", "1", "--out"]
    first = subprocess.Popen([*argv, str(out), "--", str(SLEEPER), "{t=30,31}"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _pid(out, "t=30") is None:
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        second = cli("sweep", "--workers", "1", "--out", out, "--", SLEEPER, "{t=30,31}")
        assert second.returncode == 2
        assert second.stderr == f"popvision-cli: {out}: another sweep is running into this folder\n"
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130
