"""Run…: a bundled example runs as a child process (QProcess) with autoReport on, and its
report opens when it finishes. The window never runs engine code itself."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, Signal
from PySide6.QtWidgets import QInputDialog

from popvision_py.app.dialogs import show_message

if TYPE_CHECKING:
    from popvision_py.app.main_window import MainWindow

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
RUNS = Path(tempfile.gettempdir()) / "popvision-runs"


def bundled_examples() -> list[Path]:
    """The example programs that write reports (the tutorials)."""
    return sorted(EXAMPLES.glob("tutorial*.py"))


class ExampleRunner(QObject):
    """One child run at a time; its output goes to the status bar, its report to the window."""

    report_ready = Signal(str)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.process: QProcess | None = None
        self.report_dir: Path | None = None
        self.output = ""

    @property
    def running(self) -> bool:
        return self.process is not None

    def choose_and_run(self) -> None:
        examples = bundled_examples()
        names = [p.name for p in examples]
        name, ok = QInputDialog.getItem(
            self.window,
            "Run an example",
            "Run with reports on, then open its report:",
            names,
            0,
            False,
        )
        if ok and name:
            self.run(examples[names.index(name)])

    def run(self, script: Path, report_dir: Path | None = None) -> None:
        if self.running:
            self.window.statusBar().showMessage("A run is already going on.", 5000)
            return
        self.report_dir = report_dir or RUNS / f"{script.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        self.report_dir.mkdir(parents=True, exist_ok=True)
        env = QProcessEnvironment.systemEnvironment()
        options = {"autoReport.all": "true", "autoReport.directory": str(self.report_dir)}
        env.insert("POPLAR_ENGINE_OPTIONS", json.dumps(options))
        process = QProcess(self)
        process.setProcessEnvironment(env)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(self._on_output)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self.process, self.output = process, ""
        self.window.statusBar().showMessage(f"Running {script.name}…")
        process.start(sys.executable, [str(script)])

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.waitForFinished(5000)
            self.process = None

    def _on_output(self) -> None:
        if self.process is None:
            return
        text = bytes(self.process.readAllStandardOutput().data()).decode("utf-8", "replace")
        self.output += text
        last = [line for line in self.output.splitlines() if line.strip()]
        if last:
            self.window.statusBar().showMessage(last[-1][:200])

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.process = None
            show_message(self.window, "Run failed", f"{sys.executable} could not be started.")

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self.process = None
        folders = sorted(self.report_dir.glob("*/profile.pop")) if self.report_dir else []
        if code != 0 or status != QProcess.ExitStatus.NormalExit or not folders:
            tail = "\n".join(self.output.splitlines()[-15:])
            show_message(
                self.window,
                "Run failed",
                f"The program exited with code {code} and wrote no report in "
                f"{self.report_dir}.\n\n{tail}",
            )
            return
        folder = str(folders[0].parent)
        self.report_ready.emit(folder)
        self.window.open_paths([folder])
