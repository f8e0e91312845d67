"""A trace is told by its content, not its name (issue 38): gzip Chrome JSON, as PyTorch's
profiler and viztracer write it, opens in ``popvision-cli trace`` and ``pva.openTrace``
like the plain file; a .pvti or JSON renamed anything still opens; what is neither says
what it is instead. ``recognise`` is the one place every opener asks."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest

from profiler_core import pva
from profiler_core.cli import main
from profiler_core.errors import ReportError
from profiler_core.formats.recognise import FileKind, recognise
from profiler_core.trace import open_trace

EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python3"}},
    {"ph": "X", "name": "aten::mm", "ts": 0, "dur": 10, "pid": 7, "tid": 7},
    {"ph": "X", "name": "aten::add", "ts": 20, "dur": 5, "pid": 7, "tid": 7},
    {"ph": "i", "name": "step", "ts": 30, "pid": 7, "tid": 7},
]


def gz(path: Path, events: list = EVENTS) -> Path:
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events}, f)
    return path


def labels(trace) -> list[str]:
    return sorted(trace.label_of(i) for i in range(len(trace)))


@pytest.mark.parametrize("name", ["t.json.gz", "rank-0.pt.trace.json.gz", "run.log", "trace"])
def test_gzip_chrome_json_opens_whatever_its_name(tmp_path, name):
    path = gz(tmp_path / name)
    found = recognise(path)
    assert (found.kind, found.gzip, found.is_trace) == (FileKind.CHROME_JSON, True, True)
    assert labels(open_trace(path)) == ["aten::add", "aten::mm", "step"]


def test_the_cli_trace_command_reads_a_gzip_trace(tmp_path, capsys):
    path = gz(tmp_path / "t.json.gz")
    assert main(["trace", str(path)]) == 0
    out = capsys.readouterr().out
    assert "events:   3" in out
    assert "python3" in out  # the process of the one thread


def test_pva_opens_a_gzip_trace(tmp_path):
    trace = pva.openTrace(gz(tmp_path / "t.json.gz"))
    (process,) = trace.processes
    assert process.name == "python3"
    assert [e.label for e in process.threads[0].allEvents] == ["aten::mm", "aten::add", "step"]


def test_plain_json_and_a_pvti_renamed_anything_open(tmp_path, small_pvti):
    text = tmp_path / "trace.txt"
    text.write_text("\n  " + json.dumps(EVENTS))  # the bare array form, after white space
    assert recognise(text).kind is FileKind.CHROME_JSON
    assert labels(open_trace(text)) == ["aten::add", "aten::mm", "step"]
    renamed = tmp_path / "recording.dat"
    shutil.copy(small_pvti, renamed)
    assert recognise(renamed).kind is FileKind.PVTI
    assert len(open_trace(renamed)) == len(open_trace(small_pvti))


def test_folders_are_reports_or_pvti_folders_or_neither(tmp_path, small_pvti):
    assert recognise(small_pvti.parent).kind is FileKind.PVTI_FOLDER
    report = tmp_path / "report"
    report.mkdir()
    (report / "profile.pop").write_bytes(b"\0" * 16)
    shutil.copy(small_pvti, report / "beside.pvti")
    assert recognise(report).kind is FileKind.REPORT  # a report with its trace: a report
    assert recognise(report / "profile.pop").kind is FileKind.REPORT
    empty = tmp_path / "empty"
    empty.mkdir()
    assert recognise(empty).kind is FileKind.NEITHER
    with pytest.raises(ReportError, match="folder holds no .pvti files$"):
        open_trace(empty)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (gzip.compress(b"col_a,col_b\n1,2\n"), "gzip of something that is not JSON"),
        (gzip.compress(b""), "gzip of no text"),
        (b"\x1f\x8b" + b"\xff" * 64, "a damaged gzip stream"),
        (b"epoch 1: loss 0.5\n", "not SQLite, JSON or gzip"),
    ],
)
def test_what_is_neither_says_what_it_is_instead(tmp_path, content, why):
    path = tmp_path / "x.json.gz"
    path.write_bytes(content)
    found = recognise(path)
    assert (found.kind, found.why_not) == (FileKind.NEITHER, why)
    assert found.goes_to_trace_reader  # named like a trace: the trace reader says why
    with pytest.raises(ReportError) as err:
        open_trace(path)
    assert str(err.value) == (
        f"{path}: neither a .pvti trace (SQLite) nor Chrome trace JSON, plain or gzip ({why})"
    )


def test_unreadable_paths_are_said_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json.gz"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    cases = {
        fifo: "is not a regular file (a device, FIFO or socket)",
        empty: "empty file: neither a trace nor a report",
        tmp_path / "gone.json": "no such file",
    }
    for path, why in cases.items():
        found = recognise(path)
        assert (found.kind, found.unreadable, found.why_not) == (FileKind.NEITHER, True, why)
        with pytest.raises(ReportError) as err:
            open_trace(path)
        assert str(err.value) == f"{path}: {why}"


def test_a_file_named_otherwise_that_is_neither_goes_to_the_report_reader(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# notes\n")
    assert not recognise(path).goes_to_trace_reader
    assert not recognise(tmp_path).goes_to_trace_reader  # an empty folder: the report side
