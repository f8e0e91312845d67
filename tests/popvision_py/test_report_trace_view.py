"""Issue 26 point 6 in the window: a report's System Trace shows the trace its program
recorded writing, wherever PVTI_OPTIONS put it; a recorded trace that has moved beside the
report is still found; one that is gone is named on the page, not a crash."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from popvision_py.app.main_window import MainWindow
from popvision_py.viewmodels.trace_open import traces_of_report
from profiler_core.formats.profile_pop import read_profile, write_profile
from profiler_core.trace import open_trace
from tests.popvision_py.conftest import open_with_file_menu
from tests.popvision_py.test_system_trace_view import drawn_keys, wait_trace

SHOT = os.environ.get("REPORT_TRACE_SHOT")  # a picture to look at, if set


def _written_trace(report: Path) -> Path:
    (path,) = report.parents[1].glob("*.pvti")  # in the working folder of the run
    return path


def test_a_reports_system_trace_shows_the_trace_written_in_the_working_folder(
    qtbot, window: MainWindow, material_traced_report: Path, monkeypatch
):
    assert not list(material_traced_report.parent.glob("*.pvti"))  # not in or beside it
    open_with_file_menu(qtbot, window, material_traced_report, monkeypatch)
    wait_trace(qtbot, window)
    view = window.traces.view
    assert view.model is not None and not view.showing_message()
    expected = open_trace(_written_trace(material_traced_report))
    trace = view.model.trace
    assert len(trace) == len(expected) > 0
    assert sorted(trace.label_of(i) for i in range(len(trace))) == sorted(
        expected.label_of(i) for i in range(len(expected))
    )
    window.show_view("System Trace")
    qtbot.wait(50)
    labels = {view.model.trace.label_of(int(k)) for k in drawn_keys(view)}
    assert {"Engine::compile", "Engine::run(0)"} <= labels  # drawn spans
    names = [n for n in view.timeline.lane_axis.names if not n.startswith("↳")]
    assert sorted(names) == ["IPU 0", "MainThread"]  # the host thread and the IPU track
    if SHOT:
        window.grab().save(SHOT)


def _report_recording(tmp_path: Path, source: Path, traces: list[str]) -> Path:
    """A copy of ``source`` whose profile.pop records ``traces``."""
    folder = tmp_path / "reports" / "engine"
    shutil.copytree(source, folder)
    profile = read_profile(folder / "profile.pop")
    profile.header.traces = traces
    write_profile(folder / "profile.pop", profile)
    return folder


def test_a_recorded_trace_moved_beside_its_report_is_found_by_name(
    qtbot, window: MainWindow, material_traced_report: Path, tmp_path, monkeypatch
):
    written = _written_trace(material_traced_report)
    gone = tmp_path / "old_machine" / written.name
    report = _report_recording(tmp_path, material_traced_report, [str(gone)])
    shutil.copy(written, report.parent / written.name)
    open_with_file_menu(qtbot, window, report, monkeypatch)
    wait_trace(qtbot, window)
    view = window.traces.view
    assert view.model is not None and len(view.model.trace) == len(open_trace(written))


def test_a_recorded_trace_that_is_gone_is_named_on_the_page(
    qtbot, window: MainWindow, material_traced_report: Path, tmp_path, monkeypatch
):
    gone = tmp_path / "deleted" / "2026_11_26_093000_4242.pvti"
    report = _report_recording(tmp_path, material_traced_report, [str(gone)])
    (report.parent / "unrelated.pvti").write_bytes(b"")  # not this report's: not shown
    open_with_file_menu(qtbot, window, report, monkeypatch)
    assert not window.traces.loader.busy
    view = window.traces.view
    assert view.model is None and view.showing_message()
    text = view.message.text()
    assert "no longer where the program wrote it" in text and str(gone) in text
    window.show_view("System Trace")  # the page opens and says it; the window answers
    assert window.current_view() is view


def test_only_absolute_pvti_paths_a_report_records_are_followed(tmp_path):
    folder = tmp_path / "reports" / "engine"
    folder.mkdir(parents=True)
    beside = folder.parent / "host.pvti"
    beside.write_bytes(b"")
    secret = tmp_path / "secret.txt"
    secret.write_text("not a trace")
    # a report naming other files, or relative paths, gets its folder's traces instead
    for recorded in ([str(secret)], ["../../host.pvti"], []):
        traces = traces_of_report(folder, recorded)
        assert traces.found == [beside] and traces.missing == []
    recorded = tmp_path / "elsewhere" / "run.pvti"
    recorded.parent.mkdir()
    recorded.write_bytes(b"")
    traces = traces_of_report(folder, [str(recorded), str(recorded)])
    assert traces.found == [recorded] and traces.missing == []  # beside.pvti is not its own
    assert traces.missing_text() == ""
