"""Record: a bundled example runs with PVTI on, the System Trace page shows its events while
it still runs, follow keeps the newest time in view, and when it ends the finished trace
(and the report, when it wrote one) is opened."""

from __future__ import annotations

from pathlib import Path

from popvision_py.app.runner import EXAMPLES
from profiler_core.formats.pvti import read_pvti
from profiler_core.trace import trace_from_pvti
from tests.popvision_py.conftest import wait_loaded
from tests.popvision_py.test_run import run_through_dialog, wait_finished


def _trace_view(window):
    return window.traces.view


def test_record_shows_spans_while_the_child_runs(qtbot, window, tmp_path):
    reports = tmp_path / "runs"
    run_through_dialog(qtbot, window, EXAMPLES / "pvti_epochs.py", "300 10", reports, record=True)
    runner = window.runner
    view = _trace_view(window)
    assert window.current_view() is view
    qtbot.waitUntil(lambda: runner.live is not None and runner.live.snapshots >= 1, timeout=15_000)
    first = len(view.model.trace.start_ns)
    qtbot.waitUntil(lambda: len(view.model.trace.start_ns) > first, timeout=15_000)
    assert runner.running  # new spans arrived while the child was still running
    live_labels = set(view.model.trace.labels)
    assert {"Step"} <= live_labels
    # Follow: the newest time is at the right edge of what is shown.
    lo, hi = view.model.time_limits()
    x0, x1 = view.timeline.x_range
    assert x0 <= hi <= x1 and x1 - hi < 0.1 * (x1 - x0) + 2
    # Pause follow: the range stays where the user put it while spans keep coming.
    runner.follow.setChecked(False)
    view.timeline.set_x_range(lo, lo + 1e6)
    count = len(view.model.trace.start_ns)
    qtbot.waitUntil(lambda: len(view.model.trace.start_ns) > count, timeout=15_000)
    assert view.timeline.x_range[0] == lo and abs(view.timeline.x_range[1] - (lo + 1e6)) < 1
    runner.follow.setChecked(True)
    assert view.timeline.x_range[1] >= view.model.time_limits()[1]
    wait_finished(qtbot, window)
    assert "exit 0" in runner.state_label.text()
    # No report (pvti_epochs runs no Engine): the finished file is opened in full.
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=15_000)
    expected = trace_from_pvti([read_pvti(runner.live.path)])
    shown = window.traces.opened.model.trace
    assert window.traces.opened.files == [runner.live.path]
    assert len(shown.start_ns) == len(expected.start_ns) == 300 * 11 + 300  # spans + instants
    assert list(shown.labels) == list(expected.labels)
    assert runner.live.events_read == len(expected.start_ns)  # the last poll read them all


def test_a_stopped_recording_keeps_its_partial_trace(qtbot, window, tmp_path):
    run_through_dialog(qtbot, window, EXAMPLES / "pvti_epochs.py", "100000 10", tmp_path / "r",
                       record=True)  # fmt: skip
    runner = window.runner
    view = _trace_view(window)
    qtbot.waitUntil(lambda: runner.live is not None and runner.live.snapshots >= 2, timeout=15_000)
    runner.stop(grace_ms=1000)
    wait_finished(qtbot, window, timeout=5_000)
    assert "stopped after" in runner.state_label.text()
    assert "stopped after" in window.message_box.text()
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=15_000)
    shown = window.traces.opened
    assert shown is not None and len(shown.model.trace.start_ns) > 10  # the partial trace
    assert view.model is shown.model
    assert view.banner.text() == shown.incomplete_text()  # open spans are said, not hidden
    window.show_view("Summary" if window.opened else "System Trace")  # still responsive


def test_recording_a_report_run_lands_in_its_report_with_the_trace(qtbot, window, tmp_path):
    reports = tmp_path / "runs"
    args = "--m1 90x60 --m2 60x30 --m3 30x20 --name small"
    run_through_dialog(qtbot, window, EXAMPLES / "tutorial4_matmul.py", args, reports, record=True)
    runner = window.runner
    with qtbot.waitSignal(runner.report_ready, timeout=60_000) as ready:
        pass
    assert Path(ready.args[0]) == reports / "small"
    wait_loaded(qtbot, window)
    assert [o.name for o in window.opened] == ["small"]
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=15_000)
    trace = window.traces.opened.model.trace
    assert "Engine::compile" in trace.labels  # the engine's own tracepoints, beside the report
    assert window.current_view() is _trace_view(window)  # the trace stays where it was watched


def test_popvision_record_from_the_command_line(qtbot, tmp_path, monkeypatch):
    """``popvision --record --screenshot-dir DIR -- python script args``: the live trace and
    every view are saved, and the child's exit code is returned."""
    import sys

    from popvision_py.__main__ import main

    monkeypatch.setattr("popvision_py.app.runner.RUNS", tmp_path / "runs")
    out = tmp_path / "shots"
    settings = str(tmp_path / "s.ini")
    script = str(EXAMPLES / "pvti_epochs.py")
    code = main(["--settings", settings, "--record", "--screenshot-dir", str(out), "--",
                 sys.executable, script, "200", "10"])  # fmt: skip
    assert code == 0
    assert (out / "record-live-trace.png").stat().st_size > 5_000
    assert (out / "record-09-system-trace.png").exists()
    failing = tmp_path / "fails.py"
    failing.write_text("import sys\nprint('bad input')\nsys.exit(3)\n")
    assert main(["--settings", settings, "--record", "--screenshot-dir", str(out), "--",
                 sys.executable, str(failing)]) == 3  # fmt: skip


def test_screenshots_of_the_dialog_console_and_live_record(qtbot, window, tmp_path,
                                                           screenshot_dir):  # fmt: skip
    for theme in ("light", "dark"):
        window.set_theme(theme)
        window.actions.record.trigger()
        dialog = window.runner.dialog
        dialog.set_script(EXAMPLES / "pvti_epochs.py")
        dialog.args.setText("400 10 --prefetch")
        dialog.report_dir.setText(str(tmp_path / theme))
        qtbot.waitExposed(dialog)
        dialog.grab().save(str(screenshot_dir / f"run-dialog-{theme}.png"))
        dialog.ok.click()
        qtbot.waitUntil(lambda: window.runner.live.snapshots >= 3, timeout=15_000)
        assert window.runner.running
        view = _trace_view(window)
        # The second recording too shows its charts, not the "waiting" message.
        assert view.pages.currentIndex() == 0 and view.model is window.runner.live.shown.model
        window.grab().save(str(screenshot_dir / f"record-live-{theme}.png"))
        wait_finished(qtbot, window)
        qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=15_000)
    script = tmp_path / "fails.py"
    script.write_text("print('\\x1b[32mloading\\x1b[0m')\nraise SystemExit('bad data in row 7')\n")
    run_through_dialog(qtbot, window, script, "--rows 7", tmp_path / "runs")
    wait_finished(qtbot, window)
    window.grab().save(str(screenshot_dir / "run-console-failed-dark.png"))
    assert "bad data in row 7" in window.message_box.text()
    assert window.runner.live is None and not window.traces.loader.busy  # no trace to read


def test_recording_a_program_that_writes_no_trace_says_so(qtbot, window, tmp_path):
    script = tmp_path / "untraced.py"
    script.write_text("print('no tracepoints here')\n")
    run_through_dialog(qtbot, window, script, "", tmp_path / "runs", record=True)
    wait_finished(qtbot, window)
    view = _trace_view(window)
    assert window.current_view() is view
    assert "wrote no host trace" in view.message.text()
    assert "exit 0" in window.runner.state_label.text()
