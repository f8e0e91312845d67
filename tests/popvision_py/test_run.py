"""Run… from the toolbar: the dialog starts a real child process, the console fills, Stop
ends it (terminate, then kill), the exit status is shown, and bad input gets a message."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QElapsedTimer, QTimer

from popvision_py.app.main_window import MainWindow
from popvision_py.app.runner import EXAMPLES
from popvision_py.viewmodels.run_config import RunConfig


def run_through_dialog(qtbot, window: MainWindow, script: Path, args: str, reports: Path,
                       record: bool = False, pvti: bool = False):  # fmt: skip
    """Run… (or Record…), the script and arguments typed in, then Run pressed."""
    (window.actions.record if record else window.actions.run).trigger()
    dialog = window.runner.dialog
    assert dialog is not None and dialog.isVisible()
    dialog.set_script(script)
    dialog.args.setText(args)
    dialog.report_dir.setText(str(reports))
    dialog.pvti.setChecked(pvti or record)
    dialog.ok.click()
    return dialog


def wait_finished(qtbot, window: MainWindow, timeout: int = 30_000) -> None:
    qtbot.waitUntil(lambda: not window.runner.running, timeout=timeout)


def write_script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def test_dialog_lists_the_bundled_examples_first(qtbot, window):
    window.actions.run.trigger()
    dialog = window.runner.dialog
    names = [dialog.script.itemText(i) for i in range(dialog.script.count())]
    assert names[0] == "tutorial1_variables.py (example)"
    assert "pvti_epochs.py (example)" in names and names[-1] == "Choose a script…"
    assert dialog.interpreter.placeholderText() == sys.executable
    dialog.reject()


def test_run_streams_output_and_shows_the_exit_status(qtbot, window, tmp_path):
    script = write_script(tmp_path, "talk.py", (
        "import sys, time\n"
        "for i in range(5):\n"
        "    print(f'line {i}', flush=True)\n"
        "    time.sleep(0.05)\n"
        "print('\\x1b[31mto stderr\\x1b[0m', file=sys.stderr)\n"
    ))  # fmt: skip
    run_through_dialog(qtbot, window, script, "", tmp_path / "runs")
    assert window.runner.running
    console = window.runner.console
    assert console.isVisible() and console.stop.isEnabled()
    qtbot.waitUntil(lambda: "line 1" in console.shown_text(), timeout=10_000)
    assert window.runner.running  # the output shows while the child runs
    wait_finished(qtbot, window)
    text = console.shown_text()
    assert text.splitlines()[0] == f"$ {sys.executable} {script}"
    assert [f"line {i}" for i in range(5)] == [t for t in text.splitlines() if t.startswith("line")]
    assert "to stderr" in text and "\x1b" not in text  # stderr too, colours stripped
    assert "exit 0 after" in window.runner.state_label.text()
    assert not console.stop.isEnabled()
    console.search_box.setText("line 3")
    assert console.find_next() and console.current_line() == "line 3"
    assert not console.follow.isChecked()  # the match stays in view
    assert console.matches.text() == "1 lines"


def test_arguments_reach_the_script_unchanged(qtbot, window, tmp_path):
    script = write_script(
        tmp_path, "argv.py", "import json, sys\nprint(json.dumps(sys.argv[1:]))\n"
    )
    marker = tmp_path / "pwned"
    run_through_dialog(qtbot, window, script,
                       f"""'two words' "a;b" 'q"uote' ; touch {marker}""", tmp_path / "runs")  # fmt: skip
    wait_finished(qtbot, window)
    printed = json.loads(window.runner.console.shown_text().splitlines()[1])
    assert printed == ["two words", "a;b", 'q"uote', ";", "touch", str(marker)]
    assert not marker.exists()  # nothing ran but the script


def test_stop_terminates_then_kills_after_the_grace_period(qtbot, window, tmp_path):
    script = write_script(tmp_path, "stubborn.py", (
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: print('ignoring SIGTERM', flush=True))\n"
        "print('started', flush=True)\n"
        "while True:\n"
        "    time.sleep(0.05)\n"
    ))  # fmt: skip
    run_through_dialog(qtbot, window, script, "", tmp_path / "runs")
    console = window.runner.console
    qtbot.waitUntil(lambda: "started" in console.shown_text(), timeout=10_000)
    clock = QElapsedTimer()
    clock.start()
    window.runner.stop(grace_ms=600)
    wait_finished(qtbot, window, timeout=5_000)
    assert 550 <= clock.elapsed() < 3_000  # killed once the grace period was over
    assert "ignoring SIGTERM" in console.shown_text()  # terminate came first
    assert "stopped after" in window.runner.state_label.text()
    assert "killed" in window.runner.state_label.text()
    assert "stopped after" in window.message_box.text()


def test_a_crash_at_import_shows_its_last_lines(qtbot, window, tmp_path):
    script = write_script(tmp_path, "broken.py", "import no_such_module_here\n")
    run_through_dialog(qtbot, window, script, "", tmp_path / "runs")
    wait_finished(qtbot, window)
    assert "exit 1 after" in window.runner.state_label.text()
    text = window.message_box.text()
    assert "broken.py exit 1" in text and "No module named 'no_such_module_here'" in text


@pytest.mark.parametrize("case", ["missing", "not python", "bad interpreter"])
def test_bad_runs_are_refused_in_the_dialog(qtbot, window, tmp_path, case):
    text = write_script(tmp_path, "notes.txt", "hello")
    window.actions.run.trigger()
    dialog = window.runner.dialog
    dialog.set_script(tmp_path / "missing.py" if case == "missing" else
                      text if case == "not python" else EXAMPLES / "pvti_epochs.py")  # fmt: skip
    if case == "bad interpreter":
        dialog.interpreter.setText(str(tmp_path / "python-nope"))
    dialog.ok.click()
    expected = {"missing": "does not exist", "not python": "not a Python script",
                "bad interpreter": "cannot be found"}[case]  # fmt: skip
    assert expected in dialog.problem.text()
    assert dialog.isVisible() and not window.runner.running  # nothing started
    dialog.reject()


def test_an_interpreter_that_fails_to_start_says_so(qtbot, window, tmp_path):
    fake = write_script(tmp_path, "fake-python", "this is not a program\n")
    os.chmod(fake, 0o755)  # executable, but the kernel cannot run it
    config = RunConfig(str(EXAMPLES / "pvti_epochs.py"), interpreter=str(fake),
                       report_dir=str(tmp_path / "runs"))  # fmt: skip
    window.runner.start(config)
    wait_finished(qtbot, window)
    assert "could not be started" in window.message_box.text()
    assert "could not start" in window.runner.state_label.text()


def test_a_flood_of_output_stays_bounded_and_the_window_responsive(qtbot, window, tmp_path):
    script = write_script(tmp_path, "flood.py", (
        "import sys\n"
        "line = 'x' * 99 + '\\n'\n"
        "for _ in range(200):\n"
        "    sys.stdout.write(line * 1000)\n"  # 20 MB
    ))  # fmt: skip
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    run_through_dialog(qtbot, window, script, "", tmp_path / "runs")
    wait_finished(qtbot, window, timeout=60_000)
    timer.stop()
    runner = window.runner
    assert runner.buffer.total_lines == 1 + 200_000 + 1  # command, output, exit status
    assert len(runner.buffer.lines) == runner.buffer.max_lines
    assert runner.console.lines.rowCount() == runner.buffer.max_lines
    assert runner.console.current_line() == ""
    last = runner.console.lines.index(runner.buffer.max_lines - 1, 0)
    assert runner.console.lines.data(last).startswith("[exit 0 after")
    assert max(gaps) < 0.5, f"the window's thread was held {max(gaps):.3f} s"


def test_run_again_and_recent_runs_repeat_the_last_run(qtbot, window, tmp_path):
    script = write_script(tmp_path, "hello.py", "import sys\nprint('hello', sys.argv[1:])\n")
    run_through_dialog(qtbot, window, script, "'a b'", tmp_path / "runs")
    wait_finished(qtbot, window)
    recent = window.settings.recent_runs()
    assert recent[0].script == str(script) and recent[0].args == ["a b"]
    window.run_again_action.trigger()
    assert window.runner.running
    wait_finished(qtbot, window)
    assert "hello ['a b']" in window.runner.console.shown_text()
    window.recent_runs_menu.aboutToShow.emit()
    texts = [a.text() for a in window.recent_runs_menu.actions()]
    assert texts == [f"{sys.executable} {script} 'a b'"]


def test_closing_the_window_ends_the_run(qtbot, window, tmp_path):
    script = write_script(tmp_path, "forever.py", "import time\nprint('up', flush=True)\n"
                          "while True:\n    time.sleep(0.05)\n")  # fmt: skip
    run_through_dialog(qtbot, window, script, "", tmp_path / "runs")
    qtbot.waitUntil(lambda: "up" in window.runner.console.shown_text(), timeout=10_000)
    pid = window.runner.process.processId()
    window.close()
    assert not window.runner.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the child is gone, not left behind
