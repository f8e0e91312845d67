"""Bad input through open_report, the analyses and the CLI: unreadable files and decodable
but inconsistent reports raise ReportError naming the file, section and problem, and the
intact sections still load."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.program_tree import program_tree
from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from profiler_core.formats.profile_pop.writer import build_message, write_message
from profiler_core.report import open_report
from tests.profiler_core.everything import analyse_everything, cli_everything
from tests.profiler_core.factories import make_report


def write_report(folder, damage=None, seed=5):
    folder.mkdir(parents=True, exist_ok=True)
    profile, debug = make_report(seed)
    if damage is not None:
        damage(profile, debug)
    write_profile(folder / "profile.pop", profile)
    write_debug(folder / "debug.cbor", debug)
    return folder


def set_column(obj, name, index, value):
    column = getattr(obj, name).copy()
    column[index] = value
    setattr(obj, name, column)


INCONSISTENT = {
    "a step's compute set past the graph's": (
        lambda p, d: set_column(p.programs, "step_cs", 2, 40),
        "section 'programs': 'step_cs' refers to compute set 40, but there are 3",
    ),
    "a region on a tile the target lacks": (
        lambda p, d: set_column(p.graph, "region_tile", 0, 8),
        "section 'graph': 'region_tile' refers to tile 8, but there are 8",
    ),
    "compute cycles on a tile the target lacks": (
        lambda p, d: set_column(p.programs, "cst_tile", 0, -3),
        "section 'programs': 'cst_tile' refers to tile -3",
    ),
    "memory for another number of tiles": (
        lambda p, d: (
            setattr(p.memory, "by_category", p.memory.by_category[:, :5].copy())
            or setattr(p.memory, "interleaved", p.memory.interleaved[:5].copy())
        ),
        "section 'memory': memory for 5 tiles, but section 'target' has 8 tiles",
    ),
    "step cycles for another number of IPUs": (
        lambda p, d: setattr(p.programs, "step_cycles", np.tile(p.programs.step_cycles, 2)),
        "'step_cycles' has shape (10, 4), but there are 10 steps on 2 IPUs",
    ),
    "a step kind that does not exist": (
        lambda p, d: set_column(p.programs, "step_kind", 4, 99),
        "'step_kind' refers to step kind 99",
    ),
    "a run executing a step the programs lack": (
        lambda p, d: set_column(p.execution.runs[1], "step_ids", 0, 10),
        "section 'execution': run 1: executes step 10, but there are 10",
    ),
    "a run going back in time": (
        lambda p, d: set_column(p.execution.runs[1], "start_cycles", 3, -1),
        "run 1: start cycles go backwards",
    ),
    "a live range of a variable the graph lacks": (
        lambda p, d: set_column(p.liveness, "interval_var", 0, 8),
        "section 'liveness': 'interval_var' refers to variable 8",
    ),
    "a variable of a debug context debug.cbor lacks": (
        lambda p, d: set_column(p.graph, "var_debug", 0, 12),
        "section 'graph': 'var_debug' refers to debug context 12, but there are 12",
    ),
}


@pytest.mark.parametrize("case", list(INCONSISTENT))
def test_inconsistent_reports_name_the_section_and_problem(tmp_path, case):
    damage, problem = INCONSISTENT[case]
    folder = write_report(tmp_path / "r", damage)
    errors = analyse_everything(folder)
    messages = [str(e) for e in errors]
    assert any(problem in m for m in messages), messages
    assert all(e.path is not None for e in errors)
    for code, err in cli_everything(folder):
        assert code in (0, 1, 2, 5), err
        assert "Traceback" not in err and "internal error" not in err
        if code == 2:
            assert err.startswith(f"popvision-cli: {folder}") and err.count("\n") == 1
        if code == 5:  # partial: a summary of what could be read, the rest as warnings
            assert err.startswith(f"popvision-cli: warning: {folder}")


def test_a_damaged_section_leaves_the_others_working(tmp_path):
    folder = write_report(tmp_path / "r", INCONSISTENT["a step's compute set past the graph's"][0])
    report = open_report(folder)
    assert memory_table(report).num_tiles == 8
    summary = report.summary()
    assert summary.memory.total_including_gaps == int(report.memory.by_category.sum())
    assert summary.errors == {}  # the summary does not use step_cs ...
    with pytest.raises(ReportError, match="'step_cs' refers to compute set 40, but there are 3"):
        program_tree(report)  # ... the analyses that do name it


def write_message_with(tmp_path, patch):
    folder = tmp_path / "r"
    folder.mkdir()
    message = build_message(make_report(5)[0])
    patch(message)
    write_message(folder / "profile.pop", message)
    return folder


@pytest.mark.parametrize(
    ("make", "problem", "error_type"),
    [
        (lambda tmp: tmp / "absent", "no such file or folder", ReportError),
        (
            lambda tmp: write_message_with(tmp, lambda m: setattr(m, "magic", "a jpeg")),
            "not a popvision-py profile",
            ReportError,
        ),
        (
            lambda tmp: write_message_with(tmp, lambda m: setattr(m, "formatMajor", 7)),
            "written in profile format 7.5",  # 7.<our minor>: 1.5 (lightweight profiling blocks)
            FormatVersionError,
        ),
    ],
)
def test_unreadable_profiles_through_open_report_and_the_cli(tmp_path, make, problem, error_type):
    path = make(tmp_path)
    with pytest.raises(error_type, match=problem):
        open_report(path)
    for code, err in cli_everything(path):
        assert code == 2 and problem in err and err.count("\n") == 1


def test_a_truncated_profile_through_open_report_and_the_cli(tmp_path):
    folder = write_report(tmp_path / "r")
    data = (folder / "profile.pop").read_bytes()
    (folder / "profile.pop").write_bytes(data[:-100])
    with pytest.raises(ReportError, match=f"truncated after {len(data) - 100} of {len(data)}"):
        open_report(folder)
    assert {code for code, _ in cli_everything(folder)} == {2}
