"""The run's configuration without a window: option merge, environment, checks, recent runs,
and the console buffer (bounded scrollback, split lines, ANSI, search)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from popvision_py.viewmodels.console_buffer import ConsoleBuffer, strip_ansi
from popvision_py.viewmodels.run_config import (
    ENGINE_VAR,
    PVTI_VAR,
    OptionsError,
    RunConfig,
    add_recent_run,
    merge_options,
    report_folders,
    split_arguments,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "pvti_epochs.py"


def test_merge_keeps_the_users_keys_and_ours_win():
    user = '{"autoReport.directory": "/mine", "debug.instrument": "true"}'
    merged = json.loads(merge_options(user, {"autoReport.all": "true",
                                             "autoReport.directory": "/ours"}))  # fmt: skip
    assert merged == {
        "autoReport.directory": "/ours",
        "debug.instrument": "true",
        "autoReport.all": "true",
    }
    assert json.loads(merge_options("", {"a": 1})) == {"a": 1}


@pytest.mark.parametrize("bad", ["not json", "[1, 2]", '"text"'])
def test_merge_refuses_what_is_not_a_json_object(bad):
    with pytest.raises(OptionsError, match="PVTI_OPTIONS"):
        merge_options(bad, {"enable": "true"}, PVTI_VAR)


def test_environment_sets_both_variables_from_the_switches():
    config = RunConfig(str(EXAMPLE), report_dir="/runs/x", pvti=True, pvti_channels=["Training"])
    env = config.environment({"PATH": "/bin", PVTI_VAR: '{"duration": "10"}'})
    assert env["PATH"] == "/bin"
    assert json.loads(env[ENGINE_VAR]) == {"autoReport.all": "true",
                                           "autoReport.directory": "/runs/x"}  # fmt: skip
    assert json.loads(env[PVTI_VAR]) == {
        "duration": "10",
        "enable": "true",
        "directory": "/runs/x",
        "channels": ["Training"],
    }
    off = RunConfig(str(EXAMPLE), auto_report=False, pvti=False)
    assert off.environment({PVTI_VAR: "x"}) == {PVTI_VAR: "x"}  # untouched when off


def test_arguments_with_spaces_quotes_and_semicolons_stay_whole():
    args = split_arguments("""--name 'two words' "a;b" 'it"s' ; rm""")
    assert args == ["--name", "two words", "a;b", 'it"s', ";", "rm"]
    config = RunConfig(str(EXAMPLE), args=args)
    program, argv = config.program(sys.executable)
    assert program == sys.executable and argv == [str(EXAMPLE), *args]
    assert split_arguments(config.command_line("python"))[2:] == args
    with pytest.raises(ValueError):
        split_arguments("'unclosed")


def test_problems_before_starting(tmp_path):
    ok = RunConfig(str(EXAMPLE), report_dir=str(tmp_path))
    assert ok.problem(sys.executable) == ""
    missing = RunConfig(str(tmp_path / "nope.py"), report_dir=str(tmp_path))
    assert "does not exist" in missing.problem(sys.executable)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert "not a Python script" in RunConfig(str(text), report_dir="x").problem(sys.executable)
    bad_python = RunConfig(str(EXAMPLE), interpreter=str(tmp_path / "python9"), report_dir="x")
    assert "cannot be found" in bad_python.problem(sys.executable)
    assert "folder for the reports" in RunConfig(str(EXAMPLE)).problem(sys.executable)


def test_recent_runs_round_trip_and_are_not_repeated():
    a = RunConfig("a.py", ["1"])
    b = RunConfig("b.py")
    recent = add_recent_run(add_recent_run(add_recent_run([], a), b), RunConfig("a.py", ["1"]))
    assert [c.script for c in recent] == ["a.py", "b.py"]
    assert RunConfig.from_json(a.to_json()) == a
    assert RunConfig.from_json("{broken") is None
    assert RunConfig.from_json('{"nope": 1}') is None


def test_report_folders_are_those_with_a_profile(tmp_path):
    for name in ("b", "a"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "profile.pop").write_bytes(b"")
    (tmp_path / "c").mkdir()
    assert report_folders(tmp_path) == [tmp_path / "a", tmp_path / "b"]
    assert report_folders(tmp_path / "missing") == []


def test_console_joins_split_lines_and_strips_ansi():
    buf = ConsoleBuffer(max_lines=100)
    assert buf.append("hel") == []
    assert buf.append("lo\n\x1b[31mred\x1b[0m\r\nprog 1%\rprog 100%\nend") == [
        "hello",
        "red",
        "prog 100%",
    ]
    assert buf.finish() == ["end"]
    assert strip_ansi("\x1b[1;32mok\x1b[0m \x1b]0;title\x07x") == "ok x"
    assert buf.search("RED") == [1] and buf.search("") == []


def test_console_scrollback_is_bounded():
    buf = ConsoleBuffer(max_lines=50)
    for chunk in range(100):
        buf.append("".join(f"line {chunk * 10 + i}\n" for i in range(10)))
    assert len(buf.lines) == 50 and buf.total_lines == 1000 and buf.dropped == 950
    assert buf.lines[0] == "line 950" and buf.lines[-1] == "line 999"
    assert buf.last_lines(2) == ["line 998", "line 999"]
    buf.append("x" * 100_000)  # a megabyte line without newline stays bounded
    assert len(buf.partial) <= 4000


def test_an_onnx_model_runs_through_the_importers_command_and_writes_its_report(tmp_path):
    import os
    import runpy
    import subprocess

    import onnx

    example = Path(__file__).resolve().parents[2] / "resources" / "examples" / "onnx_cnn.py"
    model = tmp_path / "cnn.onnx"
    onnx.save(runpy.run_path(str(example), run_name="example")["small_cnn"](), model)
    config = RunConfig(str(model), args=["--batch", "2"], report_dir=str(tmp_path / "runs"))
    assert config.problem(sys.executable) == ""
    program, argv = config.program(sys.executable)
    assert argv == ["-m", "ipu_engine.onnx", str(model), "--batch", "2"]
    assert config.command_line("python").startswith("python -m ipu_engine.onnx ")
    root = Path(__file__).resolve().parents[2]
    env = config.environment({**os.environ, "PYTHONPATH": str(root)})
    done = subprocess.run(
        [program, *argv], env=env, cwd=config.working_folder, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs" / "onnx_cnn" / "profile.pop").is_file()
