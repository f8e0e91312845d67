"""``popvision --record [--screenshot-dir DIR] -- python script.py args``: the same Record as
the toolbar's, from the command line. With a screenshot folder it records the run to its
end, saves the live System Trace while the child runs and every view after it, and returns
the child's exit code (0 when it succeeded), so recordings can be made in CI."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QApplication

from popvision_py.app.runner import new_report_dir
from popvision_py.viewmodels.run_config import RunConfig

if TYPE_CHECKING:
    from popvision_py.app.main_window import MainWindow


def command_config(command: list[str]) -> RunConfig:
    """``[python] script.py args…`` as a recorded run (reports and PVTI on)."""
    if not command:
        raise ValueError("--record needs a command: popvision --record -- python script.py")
    interpreter = ""
    if not command[0].lower().endswith((".py", ".pyw")) and len(command) > 1:
        interpreter, command = command[0], command[1:]
        if "/" in interpreter:  # a relative path must survive the child's working folder
            interpreter = str(Path(interpreter).absolute())
    script = str(Path(command[0]).resolve())
    return RunConfig(script, list(command[1:]), interpreter=interpreter,
                     report_dir=str(new_report_dir(script)), pvti=True)  # fmt: skip


def start_recording(window: MainWindow, command: list[str]) -> bool:
    """Start recording ``command`` in ``window``; False (with a message shown) if it cannot."""
    try:
        config = command_config(command)
    except ValueError as error:
        print(error, file=sys.stderr)
        return False
    return window.runner.start(config, record=True)


def record_screenshots(window: MainWindow, command: list[str], directory: Path) -> int:
    """Record ``command`` to its end, save the live trace and every view; the exit code."""
    from popvision_py.app.screenshots import _save, save_screenshots, wait_for_loader

    app = QApplication.instance()
    assert app is not None
    if not start_recording(window, command):
        text = window.message_box.text() if window.message_box is not None else "cannot run"
        print(f"could not record: {text}", file=sys.stderr)
        return 2
    runner = window.runner
    codes: list[int] = []
    runner.run_finished.connect(lambda code, _how: codes.append(code))
    directory.mkdir(parents=True, exist_ok=True)
    live_saved: list[Path] = []
    while runner.running:
        app.processEvents()
        live = runner.live
        if not live_saved and live is not None and live.snapshots >= 3 and runner.running:
            live_saved.append(_save(window, directory, "record-live-trace"))
        time.sleep(0.01)
    app.processEvents()
    wait_for_loader(window)
    app.processEvents()
    wait_for_loader(window)
    code = codes[0] if codes else 1
    code = code if code >= 0 else 1  # crashed, stopped or could not start
    print(f"the run {runner.last_status}", file=sys.stderr if code else sys.stdout)
    for path in [*live_saved, *save_screenshots(window, directory, "record")]:
        print(path)
    return code
