"""popvision-cli as a user runs it: text, --json and --csv of every command, the memory check
for CI, and one-line errors with exit code 2 for files that cannot be read."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from profiler_core import pva
from profiler_core.cli import main
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report
from tests.profiler_core.factories import make_debug


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_as_a_user_runs_it(tutorial4_report):
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "summary", str(tutorial4_report)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    report = open_report(tutorial4_report)
    total = int(report.memory.by_category.sum())
    cycles = report.execution.runs[0].total_cycles
    text = result.stdout
    assert "ipu2, 1 IPU(s) x 1,472 tiles" in text
    assert f"{total:,} bytes" in text
    assert "15,720,000 bytes at step 5 (m4/Reduce)" in text  # peak: 3.84 MB always + 11.88 MB
    assert f"{cycles:,}" in text


def test_summary_json_holds_the_same_numbers(capsys, tutorial4_report):
    code, out, _ = cli(capsys, "summary", "--json", tutorial4_report)
    assert code == 0
    summary = json.loads(out)
    report = open_report(tutorial4_report)
    assert summary["num_tiles"] == 1472 and summary["ipu_version"] == "ipu2"
    assert summary["memory"]["total_including_gaps"] == report.memory.by_category.sum()
    assert summary["peak_live_bytes"] == 15_720_000
    assert summary["runs"][0]["cycles"] == report.execution.runs[0].total_cycles
    assert summary["errors"] == {}
    code, out, _ = cli(capsys, "summary", "--csv", tutorial4_report)
    rows = dict(csv.reader(io.StringIO(out)))
    assert int(rows["memory.total_including_gaps"]) == summary["memory"]["total_including_gaps"]


def test_memory_csv_has_a_row_per_tile_whose_categories_add_up(capsys, tutorial4_report):
    code, out, _ = cli(capsys, "memory", "--csv", tutorial4_report)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1472
    categories = [k for k in rows[0] if k not in ("tile", "ipu", "total", "percent_of_tile")]
    assert len(categories) == len(MemoryCategory)
    by_category = open_report(tutorial4_report).memory.by_category
    for row in rows:
        assert sum(int(row[c]) for c in categories) == int(row["total"])
        assert int(row["total"]) == by_category[:, int(row["tile"])].sum()


def test_memory_max_percent_fails_naming_the_tiles(capsys, tutorial4_report):
    totals = open_report(tutorial4_report).memory.by_category.sum(axis=0)
    fullest = int(totals.argmax())
    limit = 100 * (int(totals.max()) - 1) / 638_976  # just under the fullest tile
    code, out, err = cli(capsys, "memory", "-q", "--max-percent", limit, tutorial4_report)
    over = [t for t in range(1472) if totals[t] * 100 > 638_976 * limit]
    assert code == 1 and out == ""
    assert f"{len(over)} tile(s) above" in err and f"fullest: tile {fullest}" in err
    code, _, err = cli(capsys, "memory", "-q", "--max-percent", 90, tutorial4_report)
    assert (code, err) == (0, "")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["memory", "--by-ipu", "--json"], "memory_per_IPU"),
        (["memory", "--variables", "--tiles", "0-9", "--json"], "variables_on_tiles"),
        (["liveness", "--json"], "steps"),
        (["liveness", "--step", "5", "--json"], "variables_live_at_step_5"),
        (["program-tree", "--json"], "program_tree"),
        (["operations", "--group-by", "layer", "--json"], "operations_by_layer"),
        (["execution", "--json"], "runs"),
        (["execution", "--step", "2", "--top", "3", "--json"], "slowest_tiles_of_step_2"),
    ],
)
def test_every_command_writes_json(capsys, tutorial4_report, argv, expected):
    code, out, err = cli(capsys, *argv, tutorial4_report)
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert any(key.startswith(expected) for key in document)


def test_operations_and_tree_text_show_each_matmul(capsys, tutorial4_report):
    code, out, _ = cli(capsys, "operations", "--group-by", "name", tutorial4_report)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "operations by name (5 rows)"
    assert lines[3].startswith("m4 ") and lines[4].startswith("m5 ")
    code, out, _ = cli(capsys, "program-tree", "--csv", tutorial4_report)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["name"] for r in rows][1:] == [
        "m4/Conv_1/Convolve", "m4/Reduce", "m5/Conv_1/Convolve", "m5/Reduce",
    ]  # fmt: skip
    assert sum(int(r["cycles"]) for r in rows[1:]) == int(rows[0]["cycles"])


def test_compare_shows_differences_per_category_and_matmul(
    capsys, tutorial4_report, tutorial4_variant_report
):
    code, out, _ = cli(capsys, "compare", "--json", tutorial4_report, tutorial4_variant_report)
    assert code == 0
    document = json.loads(out)
    memory = {r["category"]: r for r in document["memory_by_category"]}
    grown = 4 * ((1600 * 700 - 900 * 600) + (700 * 300 - 600 * 300) + (1600 - 900) * 200)
    assert memory["always_live_variables"]["diff"] == grown
    cycles = {r["kind"]: r for r in document["cycles_by_step_kind"]}
    assert (
        cycles["total (runs)"]["a"] == open_report(tutorial4_report).execution.runs[0].total_cycles
    )
    ops = {r["key"]: r for r in document["operations_by_name"]}
    assert ops["m4"]["in_a"] and ops["m4"]["in_b"] and ops["m5"]["in_b"]
    assert (
        ops["m4"]["total_cycles_diff"] == ops["m4"]["total_cycles_b"] - ops["m4"]["total_cycles_a"]
    )
    code, out, _ = cli(capsys, "compare", "--csv", "--variables", tutorial4_report,
                       tutorial4_variant_report)  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(out)))
    m1 = [r for r in rows if r["table"] == "variables" and r["key"] == "m1"]
    assert int(m1[0]["diff"]) == 4 * (1600 * 700 - 900 * 600)


def test_unreadable_reports_are_one_line_on_stderr_with_code_2(capsys, tmp_path, tutorial4_report):
    code, out, err = cli(capsys, "summary", tmp_path / "missing")
    assert (code, out) == (2, "")
    assert err == f"popvision-cli: {tmp_path / 'missing'}: no such file or folder\n"
    cut = tmp_path / "cut"
    cut.mkdir()
    data = (tutorial4_report / "profile.pop").read_bytes()
    (cut / "profile.pop").write_bytes(data[: len(data) // 2])
    code, _, err = cli(capsys, "memory", cut)
    assert code == 2 and "truncated after" in err and err.count("\n") == 1
    assert "Traceback" not in err
    code, _, err = cli(capsys, "execution", "--step", "0", tutorial4_report)
    assert code == 2 and "without a compute set" in err
    code, _, err = cli(capsys, "memory", "--tiles", "5000", tutorial4_report)
    assert code == 2 and "tiles go from 0 to 1471" in err


def test_a_mismatched_debug_file_fails_operations_and_every_other_command_warns(
    capsys, tmp_path, tutorial4_report
):
    # A new profile.pop beside an old debug.cbor (a kill between the two files): summary
    # exited 0 and said nothing while operations and pva said "incomplete report".
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "profile.pop").write_bytes((tutorial4_report / "profile.pop").read_bytes())
    write_debug(mixed / "debug.cbor", make_debug("another-report"))
    code, _, err = cli(capsys, "operations", mixed)
    assert code == 2 and str(mixed / "debug.cbor") in err and "does not belong" in err
    code, out, err = cli(capsys, "memory", "--by-ipu", mixed)
    assert code == 5 and "memory per IPU" in out
    assert err.startswith("popvision-cli: warning: ") and "incomplete report" in err
    code, out, err_summary = cli(capsys, "summary", "--json", mixed)
    assert code == 5 and set(json.loads(out)["errors"]) == {"debug"}
    assert err_summary.count("\n") == 1 and "warning: " in err_summary
    assert "incomplete report" in err_summary
    code, out, err = cli(capsys, "summary", tutorial4_report)  # the whole report: no warning
    assert code == 0 and err == ""
    (warning,) = pva.openReport(mixed).warnings  # scripts get the same sentence
    assert warning in err_summary and "incomplete report" in warning
    assert pva.openReport(tutorial4_report).warnings == []


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero"])
def test_a_debug_file_that_is_not_a_regular_file_is_said_not_ignored(
    capsys, tmp_path, tutorial4_report, kind
):
    # Before, `operations` ignored such a debug.cbor without a word (as if there were none).
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "profile.pop").write_bytes((tutorial4_report / "profile.pop").read_bytes())
    if kind == "fifo":
        os.mkfifo(folder / "debug.cbor")
    else:
        (folder / "debug.cbor").symlink_to("/dev/zero")
    expected = f"{folder / 'debug.cbor'}: is not a regular file (a device, FIFO or socket)"
    code, _, err = cli(capsys, "operations", folder)
    assert code == 2 and err == f"popvision-cli: {expected}\n"
    code, out, err = cli(capsys, "summary", folder)
    assert code == 5 and err == f"popvision-cli: warning: {expected}\n"
    assert "tutorial4" in out


def test_execution_of_a_run_that_does_not_exist_is_one_clear_line(tutorial4_report):
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "execution", "--run", "99"]
        + [str(tutorial4_report)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "there is no run 99; the report has 1 run(s), 0 to 0" in lines[0]
    assert "profile.pop" in lines[0]


def test_a_path_that_is_there_but_no_regular_file_says_what_it_is(capsys, tmp_path) -> None:
    # "no such file or folder" was the answer for all of these, and `ln -s L L` made the
    # window raise.
    (tmp_path / "L").symlink_to("L")
    os.mkfifo(tmp_path / "pipe.pop")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "r").mkdir()
    os.mkfifo(tmp_path / "r" / "profile.pop")
    expected = {
        "L": "cannot be read: Too many levels of symbolic links",
        "pipe.pop": "is not a regular file (a device, FIFO or socket)",
        "dangling": "is a link to a file that does not exist",
        "r": None,
    }
    for name, problem in expected.items():
        code, out, err = cli(capsys, "summary", tmp_path / name)
        if problem is None:  # the folder's FIFO profile.pop is named
            problem_path, problem = tmp_path / "r" / "profile.pop", expected["pipe.pop"]
        else:
            problem_path = tmp_path / name
        assert (code, out, err) == (2, "", f"popvision-cli: {problem_path}: {problem}\n")
