"""``popvision-cli sweep`` as a user runs it, on a LocalCluster of 2 workers: tutorial 6 over
two sizes, one of which fails; sweep.json records every run, the reports are where it says,
and ``runs`` over the sweep agrees with ``summary`` of each report."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

TUTORIAL6 = EXAMPLES / "tutorial6_matrix_vector.py"


def cli(*argv: object, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """Tutorial 6 with rows {40,80} x cols {10,0}: the 0-column runs fail (the tutorial's
    split search has nothing to choose from), the others write a report each."""
    out = tmp_path_factory.mktemp("sweep") / "t6"
    result = cli(
        "sweep", "--workers", "2", "--out", out, "--json", "--",
        TUTORIAL6, "{rows=40,80}", "{cols=10,0}",
    )  # fmt: skip
    return out, result


def test_every_run_is_a_row_of_sweep_json_and_a_failed_one_says_why(sweep):
    out, result = sweep
    assert result.returncode == 1, result.stderr  # a run failed: said, not the end
    assert "2 of 4 runs failed (2 ok)" in result.stderr
    record = json.loads((out / "sweep.json").read_text())
    assert record["parameters"] == {"rows": ["40", "80"], "cols": ["10", "0"]}
    assert record["cluster"] == "LocalCluster (2 worker(s))"
    runs = record["runs"]
    assert [r["name"] for r in runs] == [
        "rows=40,cols=10",
        "rows=40,cols=0",
        "rows=80,cols=10",
        "rows=80,cols=0",
    ]
    for run in runs:
        rows, cols = run["values"]["rows"], run["values"]["cols"]
        assert run["command"] == [sys.executable, str(TUTORIAL6), rows, cols]
        assert run["host"] == socket.gethostname()
        assert run["wall_seconds"] > 0
        assert run["run_folder"] == str(out / run["name"])
        assert run["engine_options"]["autoReport.directory"] == run["run_folder"]
        if cols == "0":
            assert (run["status"], run["exit_code"], run["reports"]) == ("failed", 1, [])
            assert run["error"] == "ValueError: min() arg is an empty sequence"
        else:
            assert (run["status"], run["exit_code"], run["error"]) == ("ok", 0, "")
            assert run["reports"] == ["engine"]
            assert (out / run["name"] / "engine" / "profile.pop").is_file()
            assert "Multiplication result OK" in (out / run["name"] / "stdout.txt").read_text()
    assert len({r["worker"] for r in runs}) == 2  # both workers ran some
    assert json.loads(result.stdout)["runs"] == runs


def test_the_sweep_writes_nothing_outside_its_folder(sweep, tmp_path):
    out, _ = sweep
    assert sorted(p.name for p in out.parent.iterdir()) == ["t6"]


def test_runs_over_the_sweep_agree_with_summary_of_each_report(sweep):
    out, _ = sweep
    result = cli("runs", "--json", out)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["runs"]
    assert [r["report"] for r in rows] == [
        "rows=40,cols=10/engine",
        "rows=40,cols=0",
        "rows=80,cols=10/engine",
        "rows=80,cols=0",
    ]
    assert [(r["rows"], r["cols"]) for r in rows] == [(40, 10), (40, 0), (80, 10), (80, 0)]
    for row in rows:
        if row["cols"] == 0:  # no report: the run's error, and nothing made up
            assert row["error"] == "ValueError: min() arg is an empty sequence"
            assert row["total_cycles"] is None and row["fits"] is None
            continue
        summary = cli("summary", "--json", out / row["report"])
        assert summary.returncode == 0, summary.stderr
        s = json.loads(summary.stdout)
        assert row["total_cycles"] == sum(r["cycles"] for r in s["runs"])
        assert row["peak_live_bytes"] == s["peak_live_bytes"]
        assert row["fullest_tile_bytes"] == s["memory"]["largest_tile_bytes"]
        assert row["tiles_over"] == s["memory"]["tiles_over_limit"] == 0
        assert row["fits"] is True and row["warnings"] == "" and row["error"] is None
    # a bigger matrix takes more cycles and more live memory
    ok = [r for r in rows if r["cols"] == 10]
    assert ok[1]["total_cycles"] > ok[0]["total_cycles"]
    assert ok[1]["peak_live_bytes"] > ok[0]["peak_live_bytes"]


def test_the_same_command_again_runs_nothing_and_retry_failed_runs_the_failed(sweep):
    out, _ = sweep
    before = json.loads((out / "sweep.json").read_text())["runs"]
    again = cli("sweep", "--workers", "2", "--out", out, "--", TUTORIAL6, "{rows=40,80}",
                "{cols=10,0}")  # fmt: skip
    assert "4 planned, 4 finished before, 0 ran now" in again.stdout
    assert json.loads((out / "sweep.json").read_text())["runs"] == before
    retried = cli("sweep", "--workers", "2", "--retry-failed", "--out", out, "--", TUTORIAL6,
                  "{rows=40,80}", "{cols=10,0}")  # fmt: skip
    assert "4 planned, 2 finished before, 2 ran now" in retried.stdout
    after = {r["name"]: r for r in json.loads((out / "sweep.json").read_text())["runs"]}
    assert after["rows=40,cols=10"] == before[0]  # the ok runs were not run again
    assert after["rows=40,cols=0"]["started"] > before[1]["started"]


def test_an_onnx_model_is_swept_over_the_sessions_options(tmp_path):
    """ipus and dtype reach InferenceSession: the reports say 1 and 2 IPUs, and float16
    halves the weights' bytes live at the peak."""
    model = tmp_path / "cnn.onnx"
    made = subprocess.run(
        [sys.executable, str(EXAMPLES / "onnx_cnn.py"), "--save", str(model)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    out = tmp_path / "sweep"
    result = cli("sweep", "--workers", "2", "--out", out, "--", model, "ipus={1,2}",
                 "dtype={float32,float16}", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    query = "SELECT ipus, dtype, num_ipus, peak_live_bytes FROM reports ORDER BY ipus, dtype"
    rows = json.loads(cli("sql", query, out, "--json").stdout)["query"]
    assert [(r["ipus"], r["dtype"], r["num_ipus"]) for r in rows] == [
        (1, "float16", 1), (1, "float32", 1), (2, "float16", 2), (2, "float32", 2),
    ]  # fmt: skip
    assert rows[0]["peak_live_bytes"] < rows[1]["peak_live_bytes"]  # half the bytes
