"""Run… / Record…: the dialog that makes a ``RunConfig``: a script (bundled examples first,
then recent scripts, then a file chooser), its arguments, working folder, interpreter, and
the autoReport and PVTI switches. It checks the run before accepting it and says what is
wrong in the dialog itself."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from popvision_py.viewmodels.run_config import RunConfig, split_arguments

BROWSE = "Choose a script…"


class RunDialog(QDialog):
    """Edit a run; ``config()`` gives it once accepted."""

    def __init__(
        self,
        examples: list[Path],
        recent: list[RunConfig],
        default_report_dir: str,
        record: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Record a run" if record else "Run a program")
        self.setMinimumWidth(640)
        self.recent = recent
        form = QFormLayout(self)
        self.script = QComboBox()
        self.script.setEditable(True)
        self.script.setToolTip("The Python script to run: a bundled example, a recent one, "
                               "any .py file, or an .onnx model (run by python -m "
                               "ipu_engine.onnx; type a path or choose one)")  # fmt: skip
        for path in examples:
            self.script.addItem(f"{path.name} (example)", str(path))
        for config in recent:
            if self.script.findData(config.script) < 0:
                self.script.addItem(f"{Path(config.script).name} (recent)", config.script)
        self.script.addItem(BROWSE, "")
        self.script.activated.connect(self._on_script_picked)
        form.addRow("Script", self.script)
        self.args = QLineEdit()
        self.args.setToolTip("Arguments, split as a shell would: quote one with spaces. "
                             "They reach the script as they are; nothing else runs.")  # fmt: skip
        form.addRow("Arguments", self.args)
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("the script's folder")
        form.addRow("Working folder", self._with_browse(self.folder, self._choose_folder))
        self.interpreter = QLineEdit()
        self.interpreter.setPlaceholderText(sys.executable)
        self.interpreter.setToolTip("The Python to run it with (empty: the one running this app)")
        form.addRow("Interpreter", self.interpreter)
        self.auto_report = QCheckBox("Write reports (autoReport.all)")
        self.auto_report.setChecked(True)
        form.addRow("", self.auto_report)
        self.report_dir = QLineEdit(default_report_dir)
        self.report_dir.setToolTip("autoReport.directory, and the PVTI directory")
        form.addRow("Reports folder", self._with_browse(self.report_dir, self._choose_reports))
        self.pvti = QCheckBox("Trace the host (PVTI)")
        self.pvti.setChecked(record)
        self.pvti.setToolTip("Set PVTI_OPTIONS so the program writes a .pvti trace")
        form.addRow("", self.pvti)
        self.channels = QLineEdit()
        self.channels.setPlaceholderText("all channels (or e.g. Training, Poplar)")
        self.channels.setToolTip("PVTI channels to trace, comma separated; empty: all")
        form.addRow("PVTI channels", self.channels)
        self.pvti.toggled.connect(self.channels.setEnabled)
        self.channels.setEnabled(record)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c0392b;")
        form.addRow(self.problem)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Record" if record else "Run")
        buttons.accepted.connect(self.check_and_accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._accepted: RunConfig | None = None
        if recent:
            self.set_config(recent[0])

    def _with_browse(self, edit: QLineEdit, slot: object) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        button = QPushButton("…")
        button.setToolTip("Choose a folder")
        button.clicked.connect(slot)
        row.addWidget(button)
        return box

    def _on_script_picked(self, index: int) -> None:
        if self.script.itemText(index) != BROWSE:
            return
        path, _ = QFileDialog.getOpenFileName(
            self, "A Python script or an ONNX model", "", "Python or ONNX (*.py *.onnx)"
        )
        if path:
            self.set_script(path)

    def _choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working folder", self.folder.text())
        if path:
            self.folder.setText(path)

    def _choose_reports(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Reports folder", self.report_dir.text())
        if path:
            self.report_dir.setText(path)

    def set_script(self, path: str | Path) -> None:
        index = self.script.findData(str(path))
        if index < 0:
            self.script.insertItem(0, Path(path).name, str(path))
            index = 0
        self.script.setCurrentIndex(index)

    def script_path(self) -> str:
        """The chosen item's path, or the path typed in the box."""
        index = self.script.currentIndex()
        text = self.script.currentText()
        if index >= 0 and self.script.itemText(index) == text:
            return str(self.script.itemData(index) or "")
        return text.strip()

    def set_config(self, config: RunConfig) -> None:
        self.set_script(config.script)
        self.args.setText(" ".join(_quote(a) for a in config.args))
        self.folder.setText(config.folder)
        self.interpreter.setText(config.interpreter)
        self.auto_report.setChecked(config.auto_report)
        if config.pvti:
            self.pvti.setChecked(True)
        self.channels.setText(", ".join(config.pvti_channels))

    def build_config(self) -> tuple[RunConfig | None, str]:
        """The run typed in, or None and why it cannot run."""
        try:
            args = split_arguments(self.args.text())
        except ValueError as error:
            return None, f"The arguments cannot be split: {error}."
        channels = [c.strip() for c in self.channels.text().split(",") if c.strip()]
        config = RunConfig(
            script=self.script_path(),
            args=args,
            folder=self.folder.text().strip(),
            interpreter=self.interpreter.text().strip(),
            auto_report=self.auto_report.isChecked(),
            report_dir=self.report_dir.text().strip(),
            pvti=self.pvti.isChecked(),
            pvti_channels=channels,
        )
        return config, config.problem(sys.executable)

    def check_and_accept(self) -> None:
        config, problem = self.build_config()
        self.problem.setText(problem)
        if config is not None and not problem:
            self._accepted = config
            self.accept()

    def config(self) -> RunConfig | None:
        return self._accepted


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)
