"""``popvision-cli execution --blocks`` (issue 43): every execution of each timed block of an
engine-made report -- block, run, execution index, start, end, cycles, IPU -- as text, CSV
and JSON, each block's totals, and a report without blocks said so."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from profiler_core.cli import main
from tests.lightweight_reports import example, lightweight_report

WORK = 3600  # the tutorial's vertex


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    return lightweight_report(tmp_path_factory.mktemp("lightweight"), "pipeline")


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_execution_blocks_lists_every_execution_as_a_user_runs_it(pipeline):
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "execution", "--blocks", str(pipeline)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "blocks (20 rows)"  # 5 x (stage1 + op2 on IPU 0, stage2 + op2 on IPU 1)
    header = lines[1].split()
    assert header == ["run", "block", "kind", "execution", "ipu", "tile", "start", "end",
                      "cycles", "depth"]  # fmt: skip
    first, nested = lines[3].split(), lines[4].split()
    # stage1's first execution starts after the Repeat's control step; op2 is its second op
    assert first == ["0", "stage1", "Block", "0", "0", "0", "20", "7,220", "7,200", "0"]
    assert nested == ["0", "op2", "Block", "0", "0", "0", "3,620", "7,220", "3,600", "1"]
    assert lines[2 + 20 + 1].startswith("20 executions of 3 blocks in 1 run(s)")
    assert "block totals (4 rows)" in result.stdout


def test_execution_blocks_csv_and_json_hold_the_same_rows(capsys, pipeline):
    code, out, _ = cli(capsys, "execution", "--blocks", "--csv", pipeline)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 20
    stage2 = [r for r in rows if r["block"] == "stage2"]
    tiles = example().TILES_PER_IPU
    assert [r["execution"] for r in stage2] == ["0", "1", "2", "3", "4"]
    assert {(r["ipu"], r["tile"], r["cycles"]) for r in stage2} == {
        ("1", str(tiles), str(2 * WORK))
    }
    code, out, _ = cli(capsys, "execution", "--blocks", "--json", pipeline)
    document = json.loads(out)
    assert len(document["blocks"]) == 20
    assert document["blocks"][0] == {
        "run": 0, "block": "stage1", "kind": "Block", "execution": 0, "ipu": 0, "tile": 0,
        "start": 20, "end": 7220, "cycles": 7200, "depth": 0,
    }  # fmt: skip
    totals = {(t["block"], t["ipu"]): t for t in document["block_totals"]}
    assert totals[("op2", 1)]["executions"] == 5 and totals[("op2", 1)]["total_cycles"] == 5 * WORK


def test_execution_blocks_of_one_run_and_of_a_run_it_lacks(capsys, pipeline):
    code, out, _ = cli(capsys, "execution", "--blocks", "--run", 0, "--csv", pipeline)
    assert code == 0 and len(out.splitlines()) == 21
    code, _, err = cli(capsys, "execution", "--blocks", "--run", 3, pipeline)
    assert code == 2 and "there is no run 3; the blocks are of 1 run(s)" in err


def test_stream_copies_are_listed_by_phase_and_stream(capsys, tmp_path):
    folder = lightweight_report(tmp_path, "streamed")
    code, out, _ = cli(capsys, "execution", "--blocks", "--csv", folder)
    rows = list(csv.DictReader(io.StringIO(out)))
    copies = [r for r in rows if r["kind"].startswith("StreamCopy")]
    assert [r["block"] for r in copies[:3]] == ["StreamCopyBegin in", "StreamCopyMid in",
                                                "StreamCopyEnd in"]  # fmt: skip
    assert len(copies) == 15 and len(rows) == 20


def test_a_report_without_blocks_says_how_to_record_them(capsys, tutorial4_report):
    code, out, err = cli(capsys, "execution", "--blocks", tutorial4_report)
    assert code == 0
    assert "no lightweight-profiling blocks" in err and "profiler.blocks.filter" in err
    code, out, _ = cli(capsys, "execution", tutorial4_report)  # the detailed trace as before
    assert code == 0 and "by step kind" in out
