"""A sweep's plan from its command: the {a,b} sets, their names, every combination once, the
engine options of each run, the .py / .onnx shortcuts, and the commands refused before
anything runs (not found, too many runs, a bad option)."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

from profiler_core.cli import main
from profiler_core.runs import SweepError, make_plan

SCRIPT = "script.py"


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / SCRIPT).write_text("print('hi')\n")
    (tmp_path / "model.onnx").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_combination_runs_once_the_last_set_changing_fastest(here):
    plan = make_plan([SCRIPT, "--rows", "{100,200}", "--cols={10,20,30}", "x"], [], here / "o")
    expected = list(itertools.product(["100", "200"], ["10", "20", "30"]))
    assert [(r.values["rows"], r.values["cols"]) for r in plan.runs] == expected
    assert [p.name for p in plan.parameters] == ["rows", "cols"]
    first = plan.runs[0]
    assert first.argv == [sys.executable, SCRIPT, "--rows", "100", "--cols=10", "x"]
    assert first.name == "rows=100,cols=10"
    assert first.folder == str((here / "o" / "rows=100,cols=10").resolve())
    assert len({r.key for r in plan.runs}) == 6  # each run its own identity


def test_sets_are_named_by_their_option_their_key_themselves_or_their_place(here):
    command = [SCRIPT, "{1,2}", "--batch-size", "{4,8}", "size={a,b}", "{dim=3,5}"]
    plan = make_plan(command, [], here / "o")
    assert [p.name for p in plan.parameters] == ["arg1", "batch_size", "size", "dim"]
    assert plan.parameters[3].values == ("3", "5")
    assert plan.runs[0].argv[2:] == ["1", "--batch-size", "4", "size=a", "3"]


def test_json_and_braces_without_a_comma_are_not_sets(here):
    text = '{"a":1,"b":2}'
    plan = make_plan([SCRIPT, text, "{x}", "{}"], [], here / "o")
    assert plan.parameters == () and len(plan.runs) == 1
    assert plan.runs[0].argv[2:] == [text, "{x}", "{}"]
    assert plan.runs[0].name == "run"


def test_two_sets_in_one_argument_vary_apart(here):
    plan = make_plan([SCRIPT, "--m1={10,20}x{30,40}"], [], here / "o")
    assert [p.name for p in plan.parameters] == ["m1", "m1_2"]
    assert [r.argv[-1] for r in plan.runs] == [
        "--m1=10x30",
        "--m1=10x40",
        "--m1=20x30",
        "--m1=20x40",
    ]


def test_engine_options_are_parameters_and_every_run_writes_its_report_in_its_folder(here):
    options = ["debug.instrument=true", "opt.proportion={0.3,0.6}"]
    plan = make_plan([SCRIPT], options, here / "o")
    assert [p.name for p in plan.parameters] == ["opt.proportion"]
    for run, value in zip(plan.runs, ("0.3", "0.6"), strict=True):
        assert run.engine_options == {
            "autoReport.all": "true",
            "debug.allowOutOfMemory": "true",  # a run that does not fit still says by how much
            "debug.instrument": "true",
            "opt.proportion": value,
            "autoReport.directory": run.folder,
        }
    plan = make_plan([SCRIPT], ["debug.allowOutOfMemory=false"], here / "o")
    assert plan.runs[0].engine_options["debug.allowOutOfMemory"] == "false"


def test_an_onnx_model_runs_with_the_sessions_options(here):
    command = ["model.onnx", "ipus={1,2}", "dtype={float32,float16}", "--seed", "3"]
    command.append("available_memory_proportion=0.4")
    plan = make_plan(command, [], here / "o")
    assert [p.name for p in plan.parameters] == ["ipus", "dtype"]
    assert plan.runs[3].argv == [
        sys.executable, "-m", "ipu_engine.onnx", "model.onnx", "--ipus", "2", "--dtype",
        "float16", "--seed", "3", "--available-memory-proportion", "0.4",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["no-such-program-xyz", "{1,2}"], "COMMAND not found: no-such-program-xyz is not on PATH"),
        (["missing.py"], "COMMAND not found: missing.py (no such file"),
        (["./not/there"], "COMMAND not found: ./not/there (not an executable file)"),
        ([SCRIPT, "{1,,2}"], "has an empty value"),
        ([SCRIPT, "{1,1}"], "repeats a value"),
        ([], "no COMMAND after --"),
    ],
)
def test_a_bad_command_is_refused_before_anything_runs(here, command, words):
    with pytest.raises(SweepError, match=None) as caught:
        make_plan(command, [], here / "o")
    assert words in str(caught.value)
    assert not (here / "o").exists()


def test_more_than_ten_thousand_runs_are_refused_unless_asked_for(here):
    sets = ["{" + ",".join(map(str, range(22))) + "}"] * 3  # 22**3 = 10,648 runs
    with pytest.raises(SweepError) as caught:
        make_plan([SCRIPT, *sets], [], here / "o")
    assert "make 10,648 runs (22 (arg1) x 22 (arg2) x 22 (arg3)), more than 10,000" in str(
        caught.value
    )
    assert "--max-runs 10648" in str(caught.value)
    assert len(make_plan([SCRIPT, *sets], [], here / "o", max_runs=10_648).runs) == 10_648


def test_the_refusal_comes_before_the_runs_are_expanded(here):
    sets = ["{" + ",".join(map(str, range(1000))) + "}"] * 4  # 10**12: never expanded
    with pytest.raises(SweepError, match="1,000,000,000,000 runs"):
        make_plan([SCRIPT, *sets], [], here / "o")


def test_the_cli_says_what_is_wrong_in_one_line_and_writes_nothing(here, capsys):
    code = main(["sweep", "--out", "o", "--", "no-such-program-xyz"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("popvision-cli: COMMAND not found: no-such-program-xyz")
    assert err.count("\n") == 1
    assert not (here / "o").exists()
    code = main(["sweep", "--out", "o", "--engine-option", "novalue", "--", SCRIPT])
    assert code == 2 and "give KEY=VALUE" in capsys.readouterr().err


def test_a_dry_run_lists_the_runs_and_runs_nothing(here, capsys):
    code = main(["sweep", "--dry-run", "--json", "--out", "o", "--", SCRIPT, "{a,b}"])
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert code == 0
    assert [r["name"] for r in runs] == ["arg1=a", "arg1=b"]
    assert [r["status"] for r in runs] == ["planned", "planned"]
    assert not Path("o").exists()


def test_a_command_without_sets_is_one_run_and_says_why(here, capsys):
    # what bash leaves of script.py {1,2} unquoted: two arguments, no set
    code = main(["sweep", "--dry-run", "--out", "o", "--", SCRIPT, "1", "2"])
    err = capsys.readouterr().err
    assert code == 0
    assert "popvision-cli: note: COMMAND holds no {a,b} set, so the sweep is one run" in err
    assert "write '{100,200}'" in err


def test_a_run_that_runs_out_of_memory_is_a_row_with_poplars_line(tmp_path):
    """run_one as a worker calls it, on a program that fails as the engine does when a
    graph does not fit: the row's error is Poplar's line, not the traceback's last."""
    from profiler_core.runs.execute import run_one

    script = tmp_path / "oom.py"
    script.write_text(
        "import sys\n"
        "print('Traceback (most recent call last):', file=sys.stderr)\n"
        "print('ipu_engine.common.errors.EngineError: Out of memory on tile 7: 700,000 bytes "
        "used but tiles only have 638,976 bytes of memory', file=sys.stderr)\n"
        "print('  (debug.allowOutOfMemory wrote the report)', file=sys.stderr)\n"
        "sys.exit(1)\n"
    )
    plan = make_plan([str(script)], [], tmp_path / "o", cwd=tmp_path)
    row = run_one(plan.runs[0].to_dict())
    assert (row["status"], row["exit_code"], row["reports"]) == ("failed", 1, [])
    assert row["error"] == (
        "ipu_engine.common.errors.EngineError: Out of memory on tile 7: 700,000 bytes used "
        "but tiles only have 638,976 bytes of memory"
    )
    assert (tmp_path / "o" / "run" / "stderr.txt").read_text().count("\n") == 3
