"""Opening two reports to compare: the Compare dialog (source, target, labels, recent
comparisons), Swap A and B, and a report dropped onto an open one (compare or replace)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QWidget,
)

from popvision_py.app.window_parts import WindowParts
from popvision_py.viewmodels.compare import side_names
from popvision_py.viewmodels.opened import OpenedReport


class CompareDialog(QDialog):
    """Source (A, the baseline) and target (B) folders, optional labels, recent pairs."""

    def __init__(
        self, recent: list[tuple[str, str]], start: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare two reports")
        self.start = start
        self.recent = QComboBox()
        self.recent.addItem("(recent comparisons)")
        for a, b in recent:
            names = side_names(Path(a), Path(b))
            self.recent.addItem(f"{names[0]}  vs  {names[1]}", (a, b))
        self.recent.setEnabled(bool(recent))
        self.recent.setToolTip("Compare a pair of reports compared before.")
        self.recent.currentIndexChanged.connect(self._on_recent)
        self.source, self.target = QLineEdit(), QLineEdit()
        self.source_label, self.target_label = QLineEdit(), QLineEdit()
        grid = QGridLayout(self)
        grid.addWidget(self.recent, 0, 0, 1, 4)
        for row, (text, edit, label) in enumerate(
            (("Source (A)", self.source, self.source_label),
             ("Target (B)", self.target, self.target_label)), start=1
        ):  # fmt: skip
            edit.setPlaceholderText("a report folder")
            label.setPlaceholderText("label (optional)")
            label.setToolTip("A name to show for this report instead of its folder's.")
            browse = QPushButton("Browse…")
            browse.clicked.connect(lambda _=False, e=edit: self._browse(e))
            grid.addWidget(QLabel(text), row, 0)
            grid.addWidget(edit, row, 1)
            grid.addWidget(browse, row, 2)
            grid.addWidget(label, row, 3)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Compare")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        grid.addWidget(buttons, 3, 0, 1, 4)
        self.setMinimumWidth(720)

    def _on_recent(self, index: int) -> None:
        pair = self.recent.itemData(index)
        if pair:
            self.source.setText(pair[0])
            self.target.setText(pair[1])

    def _browse(self, edit: QLineEdit) -> None:
        path = QFileDialog.getExistingDirectory(self, "A report folder", edit.text() or self.start)
        if path:
            edit.setText(path)

    def chosen(self) -> tuple[list[str], tuple[str, str] | None]:
        labels = (self.source_label.text().strip(), self.target_label.text().strip())
        paths = [self.source.text().strip(), self.target.text().strip()]
        return paths, labels if all(labels) else None


def compare_paths(
    window: WindowParts, paths: list[str | Path], labels: tuple[str, str] | None = None
) -> None:
    """Open ``paths`` (A then B) compared, named by ``labels`` when given."""
    window.compare_labels = labels
    window.settings.add_recent_comparison(paths[0], paths[1])
    window.open_paths(list(paths))


def choose_and_compare(window: WindowParts) -> QDialog:
    dialog = CompareDialog(window.settings.recent_comparisons(), window.start_dir(), window)
    if window.opened:
        dialog.source.setText(window.opened[0].report.location)  # an ssh:// one as typed

    def accepted() -> None:
        paths, labels = dialog.chosen()
        if all(paths):
            compare_paths(window, paths, labels)

    dialog.accepted.connect(accepted)
    dialog.open()  # window-modal, not a nested event loop: tests drive it
    window.compare_dialog = dialog
    return dialog


def apply_labels(window: WindowParts, opened: list[OpenedReport]) -> None:
    """Give the just-opened reports the labels the Compare dialog was given (once)."""
    labels = getattr(window, "compare_labels", None)
    if labels and len(opened) == 2:
        opened[0].label, opened[1].label = labels
    window.compare_labels = None


def swap_compared(window: WindowParts) -> None:
    """Swap A and B: every view is shown again with B as the baseline."""
    if len(window.opened) != 2:
        window.statusBar().showMessage("Swap needs two reports compared.", 5000)
        return
    window.opened.reverse()
    window.paths.reverse()
    window.show_reports_again()


def install_swap_action(window: WindowParts) -> QAction:
    action = QAction("Swap A and B", window)
    action.setToolTip("Make B the baseline and A the change, in every view")
    action.setStatusTip(action.toolTip())
    action.triggered.connect(lambda: swap_compared(window))
    file_menu = window.menuBar().actions()[0].menu()
    actions = file_menu.actions()
    after = actions.index(window.actions.compare) + 1
    file_menu.insertAction(actions[after] if after < len(actions) else None, action)
    toolbar_actions = window.toolbar.actions()
    at = toolbar_actions.index(window.actions.compare) + 1
    window.toolbar.insertAction(toolbar_actions[at], action)
    return action


def ask_on_drop(window: WindowParts, path: str) -> str:
    """A report dropped onto an open one: "compare", "replace" or "" (cancelled)."""
    box = QMessageBox(window)
    box.setWindowTitle("Compare or replace?")
    box.setText(f"Compare {Path(path).name} with {window.opened[0].name}, or open it instead?")
    compare = box.addButton("Compare", QMessageBox.ButtonRole.AcceptRole)
    replace = box.addButton("Replace", QMessageBox.ButtonRole.DestructiveRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    clicked = box.clickedButton()
    return "compare" if clicked is compare else "replace" if clicked is replace else ""


def dropped(window: WindowParts, paths: list[str]) -> bool:
    """Handle a drop onto an open report; False when it is an ordinary open."""
    if not window.opened or len(paths) != 1 or window.traces.claims(paths):
        return False
    choice = ask_on_drop(window, paths[0])
    if choice == "compare":
        compare_paths(window, [window.paths[0], paths[0]])  # A as it was opened (ssh:// too)
    elif choice == "replace":
        window.open_paths(paths)
    return True
