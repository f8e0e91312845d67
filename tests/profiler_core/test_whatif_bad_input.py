"""What-if on bad input (issue 41): a report without its serialized graph (the findings are
still shown and the what-if says how to get one), a graph file that is damaged, of another
format version or of another report (refused by name), and changes that cannot be planned
or records that ask for what a replay may not do (said, never crashed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_core.formats.array_bundle import write_bundle
from profiler_core.formats.serialized_graph import GRAPH_FILE, KIND, read_serialized_graph
from profiler_core.insights.whatif import what_if
from profiler_core.insights.whatif.child import ask_engine
from profiler_core.report import open_report
from tests.conftest import run_example


def _copy(report: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "tutorial4"
    shutil.copytree(report, folder)
    return folder


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "insights", "--what-if", *args, str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_report_without_its_graph_still_shows_its_findings_and_says_how_to_get_one(tmp_path):
    options = {
        "autoReport.all": "true",
        "autoReport.outputSerializedGraph": "false",
        "autoReport.directory": str(tmp_path),
    }
    run_example("tutorial4_matmul.py", {"POPLAR_ENGINE_OPTIONS": options})
    folder = tmp_path / "tutorial4"
    assert not (folder / GRAPH_FILE).exists()
    found = what_if(open_report(folder))
    assert not found.available
    assert "autoReport.outputSerializedGraph" in found.reason and GRAPH_FILE in found.reason
    result = _cli(folder, "--json")
    assert result.returncode == 5  # done, but partial: the what-if could not be made
    document = json.loads(result.stdout)
    assert document["findings"]  # the findings are there all the same
    assert document["what_if"] == {"available": False, "reason": found.reason}
    assert "warning: what-if:" in result.stderr and "outputSerializedGraph" in result.stderr


def test_a_damaged_graph_file_is_refused_by_name(tutorial4_report, tmp_path):
    folder = _copy(tutorial4_report, tmp_path)
    path = folder / GRAPH_FILE
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    found = what_if(open_report(folder))
    assert not found.available
    assert str(path) in found.reason and "checksum mismatch" in found.reason
    result = _cli(folder)
    assert result.returncode == 5 and "checksum mismatch" in result.stderr
    assert "findings" in result.stdout  # the findings table is still printed


def test_a_graph_file_of_another_format_version_is_refused_naming_both(tutorial4_report, tmp_path):
    folder = _copy(tutorial4_report, tmp_path)
    graph = read_serialized_graph(folder)
    meta = {"reportId": graph.report_id, "record": graph.record}
    write_bundle(folder / GRAPH_FILE, KIND, (2, 0), meta, dict(graph.arrays))
    found = what_if(open_report(folder))
    assert not found.available
    assert "format version 2.0; this reader knows version 1" in found.reason


def test_a_graph_file_of_another_report_is_refused(tutorial4_report, tmp_path):
    folder = _copy(tutorial4_report, tmp_path)
    other = tmp_path / "other"
    run_example("tutorial4_matmul.py", {"POPLAR_ENGINE_OPTIONS": {
        "autoReport.all": "true", "autoReport.directory": str(other)}})  # fmt: skip
    shutil.copy(other / "tutorial4" / GRAPH_FILE, folder / GRAPH_FILE)
    found = what_if(open_report(folder))
    assert not found.available and "belongs to another report" in found.reason


def _ask(folder: Path, changes: list[dict]) -> dict:
    report = open_report(folder)
    requests = [{"id": str(i), "change": c} for i, c in enumerate(changes)]
    graph = folder / GRAPH_FILE
    return ask_engine(graph, report.header.report_id, [0], requests)


def test_changes_that_cannot_be_planned_are_said_and_the_others_still_predicted(tutorial4_report):
    answers = _ask(
        tutorial4_report,
        [
            {"operation": "", "option": "type", "value": "half", "tensors": ["m1"]},
            {"operation": "m4", "option": "pipelineStage", "value": 1},
            {"operation": "m9", "option": "availableMemoryProportion", "value": 0.3},
            {"operation": "m4", "option": "availableMemoryProportion", "value": 2.0},
            {"operation": "m4", "option": "bogus", "value": 1},
            {"operation": "m4", "option": "availableMemoryProportion", "value": 0.3},
        ],
    )
    half_one = answers["0"].error
    assert answers["0"].predicted is None and "m4" in half_one and "HALF" in half_one.upper()
    assert "cannot be planned for a Poplar program" in answers["1"].error
    assert "no operation named 'm9'" in answers["2"].error
    assert "must be in (0, 1]" in answers["3"].error
    assert "option must be one of" in answers["4"].error
    assert answers["5"].error is None and answers["5"].predicted is not None  # the good one


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (
            {"seq": 0, "api": "os.system", "args": {"command": "true"}},
            "not an API a replay may call",
        ),
        ({"seq": 0, "api": "Graph.add_variable", "args": {"self": {"$code": "x"}}}, "$code"),
        ({"seq": 0, "api": "Graph.add_variable", "args": {"evil": 1}}, "takes no argument 'evil'"),
    ],
)
def test_a_record_asking_for_what_a_replay_may_not_do_is_refused(
    tutorial4_report, tmp_path, call, said
):
    folder = _copy(tutorial4_report, tmp_path)
    graph = read_serialized_graph(folder)
    record = dict(graph.record, calls=[call, *graph.record["calls"][1:]])
    meta = {"reportId": graph.report_id, "record": record}
    write_bundle(folder / GRAPH_FILE, KIND, (1, 0), meta, dict(graph.arrays))
    answers = _ask(
        folder, [{"operation": "m4", "option": "availableMemoryProportion", "value": 0.3}]
    )
    assert answers["0"].predicted is None and said in answers["0"].error
