"""Run… and Record: a Python script runs as a child process (QProcess, arguments as a list,
never a shell) with POPLAR_ENGINE_OPTIONS / PVTI_OPTIONS from the dialog's switches; its
output streams into the run console, Stop terminates it (then kills it after a grace
period), Record follows its .pvti on the System Trace page, and when it ends the report
folders it wrote are opened. The window never runs the program's code itself."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QObject, QProcess, QProcessEnvironment, Qt, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QInputDialog, QLabel

from popvision_py.app.dialogs import show_message
from popvision_py.app.recorder import LiveTrace
from popvision_py.app.run_console import RunConsole
from popvision_py.app.run_dialog import RunDialog
from popvision_py.viewmodels.console_buffer import ConsoleBuffer
from popvision_py.viewmodels.run_config import (
    TRACE_FILES,
    OptionsError,
    RunConfig,
    add_recent_run,
    newest_trace,
    report_folders,
)

if TYPE_CHECKING:
    from popvision_py.app.window_parts import WindowParts
    from popvision_py.views.system_trace.view import SystemTraceView

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
RUNS = Path(tempfile.gettempdir()) / "popvision-runs"
GRACE_MS = 3000  # after terminate, the child gets this long before it is killed
READ_CHUNK = 1 << 16  # bytes read per slot call: a flood of output is read in slices
LAST_LINES = 15


def bundled_examples() -> list[Path]:
    """The example programs (tutorials first, they write reports; then the PVTI ones)."""
    return sorted(EXAMPLES.glob("*.py"), key=lambda p: (not p.name.startswith("tutorial"), p.name))


def new_report_dir(script: str | Path) -> Path:
    return RUNS / f"{Path(script).stem}-{time.strftime('%Y%m%d-%H%M%S')}"


class RunController(QObject):
    """One child run at a time: its process, console, live trace and what happens after."""

    report_ready = Signal(str)  # a report folder the run wrote, opened in the window
    run_finished = Signal(int, str)  # exit code (-1: crashed, stopped or failed to start), text

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window = window
        self.process: QProcess | None = None
        self.config: RunConfig | None = None
        self.report_dir: Path | None = None
        self.buffer = ConsoleBuffer()
        self.console: RunConsole | None = None
        self.live: LiveTrace | None = None
        self.dialog: RunDialog | None = None
        self.chooser: QInputDialog | None = None
        self.stopping = False
        self.started_at = 0.0
        self.elapsed = QElapsedTimer()
        self.clock = QTimer(self)
        self.clock.setInterval(250)
        self.clock.timeout.connect(self._show_state)
        self.state_label = QLabel("")
        self.state_label.setToolTip("The run: elapsed time, then its exit status")
        window.statusBar().addPermanentWidget(self.state_label)
        self.last_status = ""
        self.follow: QCheckBox | None = None

    @property
    def running(self) -> bool:
        return self.process is not None

    @property
    def output(self) -> str:
        return self.buffer.text()

    # -- choosing -------------------------------------------------------------------------
    def recent_runs(self) -> list[RunConfig]:
        return self.window.settings.recent_runs()

    def choose_and_run(self, record: bool = False) -> RunDialog:
        """Open the Run… (or Record…) dialog; it starts the run when accepted."""
        recent = self.recent_runs()
        dialog = RunDialog(bundled_examples(), recent, str(RUNS), record=record, parent=self.window)
        if record:
            dialog.pvti.setChecked(True)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.accepted.connect(lambda: self.start(dialog.config(), record=record))
        dialog.open()
        self.dialog = dialog
        return dialog

    def run_again(self) -> None:
        recent = self.recent_runs()
        if not recent:
            self.window.statusBar().showMessage("No run yet to repeat: use Run… first.", 5000)
            return
        self.start(recent[0], record=recent[0].pvti)

    def run(self, script: Path, report_dir: Path | None = None) -> bool:
        """Run ``script`` with reports on into ``report_dir`` (a new folder if None)."""
        config = RunConfig(str(script), report_dir=str(report_dir or new_report_dir(script)))
        return self.start(config)

    # -- running --------------------------------------------------------------------------
    def start(self, config: RunConfig | None, record: bool = False) -> bool:
        """Start ``config``; False with a message if it cannot start."""
        if config is None:
            return False
        window = self.window
        if self.running:
            window.statusBar().showMessage("A run is already going on: Stop it first.", 5000)
            return False
        problem = config.problem(sys.executable)
        env_dict: dict[str, str] = {}
        if not problem:
            try:
                env_dict = config.environment(dict(os.environ))
            except OptionsError as error:
                problem = str(error)
        if problem:
            self._say("Cannot run", problem)
            return False
        self.config = config
        self.report_dir = Path(config.report_dir) if config.report_dir else None
        if self.report_dir is not None:
            self.report_dir.mkdir(parents=True, exist_ok=True)
        window.settings.set_recent_runs(add_recent_run(self.recent_runs(), config))
        env = QProcessEnvironment()
        for key, value in env_dict.items():
            env.insert(key, value)
        process = QProcess(self)
        process.setProcessEnvironment(env)
        process.setWorkingDirectory(str(config.working_folder))
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(self._read_output)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self.process, self.stopping = process, False
        self.live = None  # a run without Record follows no trace (an old one is done)
        self.buffer.clear()
        console = self.ensure_console()
        command = config.command_line(sys.executable)
        console.start(f"$ {command}")
        self.started_at = time.time()
        self.elapsed.start()
        self.clock.start()
        self.last_status = ""
        if record and config.pvti and self.report_dir is not None:
            self.start_live()
        program, args = config.program(sys.executable)
        process.start(program, args)
        self._show_state()
        window.statusBar().showMessage(f"Running {Path(config.script).name}…")
        return True

    def ensure_console(self) -> RunConsole:
        if self.console is None:
            self.console = RunConsole(self.buffer, self.window)
            self.console.stop_requested.connect(self.stop)
            self.window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.console)
            # Low by default: the page above stays the main thing; drag the edge for more.
            self.window.resizeDocks([self.console], [170], Qt.Orientation.Vertical)
        return self.console

    def start_live(self) -> None:
        """Record: show the System Trace page and follow the child's .pvti there."""
        assert self.report_dir is not None
        view = self.window.traces.view
        view.show_message("Recording: waiting for the program to write its first trace events…")
        self.window.traces.opened = None
        self.live = LiveTrace(view, self.report_dir, self.started_at)
        self.live.snapshot_ready.connect(self._on_live_snapshot)
        follow = self.follow_box(view)
        follow.setChecked(True)
        self._enable_trace_page()
        self.window.show_view(view.title)

    def follow_box(self, view: SystemTraceView) -> QCheckBox:
        """The page's Follow switch (made once, shown while a recording is on screen)."""
        if self.follow is None:
            self.follow = QCheckBox("Follow newest")
            self.follow.setToolTip("Keep the newest recorded time in view; off: pan and "
                                   "zoom freely while the recording goes on")  # fmt: skip
            view.controls_layout.addWidget(self.follow)
            self.follow.toggled.connect(
                lambda on: self.live.set_follow(on) if self.live is not None else None
            )
        self.follow.show()
        return self.follow

    def _enable_trace_page(self) -> None:
        titles = [v.title for v in self.window.views]
        item = self.window.rail.item(1 + titles.index(self.window.traces.view.title))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEnabled)

    def _on_live_snapshot(self) -> None:
        if self.live is not None and self.live.shown is not None:
            self.window.traces.opened = self.live.shown

    def stop(self, grace_ms: int = GRACE_MS) -> None:
        """Ask the child to end (terminate), and kill it if it has not after ``grace_ms``."""
        process = self.process
        if process is None:
            return
        self.stopping = True
        process.terminate()
        QTimer.singleShot(grace_ms, self, lambda: self._kill(process))
        self.window.statusBar().showMessage("Stopping the run…")

    def _kill(self, process: QProcess) -> None:
        if self.process is process and process.state() != QProcess.ProcessState.NotRunning:
            process.kill()

    def shutdown(self) -> None:
        """The window closes: end the child now, without waiting for a grace period."""
        if self.process is not None:
            self.process.kill()
            self.process.waitForFinished(5000)
        if self.live is not None:
            self.live.stop()

    def _read_output(self) -> None:
        """Read one slice; if more is waiting, read the next slice in a later event, so a
        program printing megabytes never holds the window's thread."""
        process = self.process
        if process is None:
            return
        data = bytes(process.read(READ_CHUNK).data())
        if data:
            self.buffer.append(data.decode("utf-8", "replace"))
        if process.bytesAvailable() > 0:
            QTimer.singleShot(0, self, self._read_output)

    def _drain(self) -> None:
        if self.process is not None:
            while self.process.bytesAvailable() > 0:
                data = bytes(self.process.read(READ_CHUNK).data())
                self.buffer.append(data.decode("utf-8", "replace"))

    def _show_state(self) -> None:
        if self.console is None or self.config is None:
            return
        name = Path(self.config.script).name
        seconds = self.elapsed.elapsed() / 1000
        if self.running:
            text = f"{name}: running {seconds:.1f} s"
            if self.live is not None:
                text += f" · {self.live.events_read:,} trace events"
        else:
            text = f"{name}: {self.last_status}"
        self.state_label.setText(text)
        self.console.set_state(text)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error != QProcess.ProcessError.FailedToStart or self.process is None:
            return
        program = self.process.program()
        detail = self.process.errorString()
        self._end(-1, f"could not start ({detail})")
        self._say("Run failed", f"{program} could not be started: {detail}.")

    def _on_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if self.process is None:
            return
        self._drain()
        seconds = self.elapsed.elapsed() / 1000
        crashed = status != QProcess.ExitStatus.NormalExit
        if self.stopping:
            how = f"stopped after {seconds:.1f} s ({'killed' if crashed else f'exit {code}'})"
        elif crashed:
            how = f"crashed after {seconds:.1f} s"
        else:
            how = f"exit {code} after {seconds:.1f} s"
        exit_code = -1 if crashed else code
        self._end(exit_code, how)
        if exit_code != 0:
            tail = "\n".join(self.buffer.last_lines(LAST_LINES)) or "(no output)"
            self._say("Run ended" if self.stopping else "Run failed",
                      f"{Path(self.config.script).name if self.config else 'The run'} "
                      f"{how}.\n\nLast lines of its output:\n{tail}")  # fmt: skip
        self._land()

    def _end(self, code: int, how: str) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.deleteLater()
        self.clock.stop()
        self.last_status = how
        if self.console is not None:
            self.console.finish(f"[{how}]")
            self.console.set_state(how)
        if self.live is not None:
            self.live.stop()
            self._on_live_snapshot()
        self._show_state()
        self.window.statusBar().showMessage(f"The run {how}.")
        self.run_finished.emit(code, how)

    def _land(self) -> None:
        """Open what the run wrote: its report (a chooser if several), else its trace -- the
        .pvti recorded live, or a trace file the run wrote in its folder (a .pvti, or
        Chrome JSON plain or gzip such as a PyTorch profiler's, told by content)."""
        if self.report_dir is None:
            return
        folders = report_folders(self.report_dir)
        live = self.live
        trace = live.path if live is not None else None
        if trace is None:
            trace = newest_trace(self.report_dir, self.started_at, TRACE_FILES)
        if live is not None and trace is None and self.config and self.config.pvti:
            self.window.traces.view.show_message(
                "The run wrote no host trace. Tracing was on (PVTI_OPTIONS) but the "
                "program made no pvti tracepoints and ran no Engine: instrument it "
                "with ipu_engine.pvti (see resources/examples/pvti_epochs.py)."
            )
        if len(folders) == 1:
            self._open_report(folders[0])
        elif len(folders) > 1:
            self._choose_report(folders)
        elif trace is not None:
            # The finished file, read in full; an incomplete one (a stopped run) says so in
            # the page's banner rather than in a second message over the exit status. A
            # recording is on its page already; a run's trace brings the page up.
            self.window.traces.open([trace], for_report=live is not None)
        elif (
            self.config is not None
            and self.config.auto_report
            and self.last_status.startswith("exit 0")
        ):
            self.window.statusBar().showMessage(
                f"The run wrote no report in {self.report_dir} (does it run an Engine?)."
            )

    def _choose_report(self, folders: list[Path]) -> None:
        chooser = QInputDialog(self.window)
        chooser.setWindowTitle("Open a report of the run")
        chooser.setLabelText(f"The run wrote {len(folders)} reports. Open:")
        chooser.setComboBoxItems([str(f) for f in folders])
        chooser.setWindowModality(Qt.WindowModality.WindowModal)
        chooser.textValueSelected.connect(lambda text: self._open_report(Path(text)))
        chooser.open()
        self.chooser = chooser

    def _open_report(self, folder: Path) -> None:
        self.report_ready.emit(str(folder))
        self.window.open_paths([folder])

    def _say(self, title: str, text: str) -> None:
        self.window.statusBar().showMessage(text.splitlines()[0])
        self.window.message_box = show_message(self.window, title, text)


def install_run_actions(window: WindowParts, runner: RunController) -> None:
    """Run > Run again, Stop run and Recent runs (Run… and Record… are in actions.py)."""
    menu = next(a.menu() for a in window.menuBar().actions() if a.menu() and a.text() == "&Run")
    window.run_again_action = menu.addAction("Run again")
    window.run_again_action.setShortcut("Ctrl+Shift+F5")
    window.run_again_action.setToolTip("Repeat the last run (same script, arguments, switches)")
    window.run_again_action.triggered.connect(runner.run_again)
    window.stop_run_action = menu.addAction("Stop run")
    window.stop_run_action.setToolTip("Terminate the run; kill it after a grace period")
    window.stop_run_action.triggered.connect(lambda: runner.stop())
    recent = menu.addMenu("Recent runs")

    def fill() -> None:
        recent.clear()
        for config in runner.recent_runs():
            action = recent.addAction(config.command_line(sys.executable))
            action.triggered.connect(
                lambda _=False, c=config: runner.start(c, record=c.pvti)
            )  # fmt: skip
        if recent.isEmpty():
            recent.addAction("(none)").setEnabled(False)

    recent.aboutToShow.connect(fill)
    window.recent_runs_menu = recent
