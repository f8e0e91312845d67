"""The Operations controls row: group-by (software layer), run, filter, and the Columns
chooser (a menu of checkable columns)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.operations import GROUP_BY_LABELS, column_help
from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip


class OperationsControls(QWidget):
    """Widgets only; the view connects them."""

    column_toggled = Signal(str, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.group_by = QComboBox()
        for key, label in GROUP_BY_LABELS.items():
            self.group_by.addItem(label, key)
        # as wide as the usual labels; the list shows the long ones whole
        self.group_by.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.group_by.setMinimumContentsLength(26)
        self.group_by.setToolTip(
            "The software layer operations are grouped by: library op (the PopLibs call, "
            "poplin::matMul), layer (outermost name scope), operation (the call's debug name), "
            "each full debug context, or the phase they ran in (a pipeline's ramp-up, steady "
            "state and ramp-down, the feeds, the gradient all-reduce)."
        )
        self.run_label = QLabel("Run:")
        self.run = QComboBox()
        self.run.setToolTip("The run whose cycles are counted.")
        self.filling = False
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter operations")
        self.filter.setToolTip("Show only operations whose name contains this text (any case).")
        self.filter.setClearButtonEnabled(True)
        self.filter.setMinimumWidth(200)
        self.count = QLabel()
        self.columns = QToolButton()
        self.columns.setText("Columns")
        self.columns.setToolTip("Choose the columns the table shows.")
        self.columns.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.columns.setMenu(QMenu(self.columns))
        self.column_actions: dict[str, QAction] = {}
        self.note = QLabel()
        self.note.setWordWrap(True)
        # a row that wraps (at 1024 px every control keeps its size, on two lines if need
        # be), the page's note under it: a long note never widens the window
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        row = FlowLayout()
        row.addWidget(group(QLabel("Group by:"), self.group_by))
        self.run_group = group(self.run_label, self.run)
        row.addWidget(self.run_group)
        row.addWidget(self.filter)
        row.addWidget(self.count)
        row.addStretch()
        row.addWidget(self.columns)
        column.addLayout(row)
        column.addWidget(self.note)

    def group(self) -> str:
        return str(self.group_by.currentData())

    def set_runs(self, runs: int, current: int) -> None:
        """List the runs (the selector shows only when there are several)."""
        self.filling = True
        try:
            self.run.clear()
            self.run.addItems([f"run {i}" for i in range(runs)])
            if 0 <= current < runs:
                self.run.setCurrentIndex(current)
        finally:
            self.filling = False
        self.run_group.setVisible(runs > 1)  # the label with its box

    def set_columns(self, headers: Iterable[str], hidden: Iterable[str]) -> None:
        """One checkable action per column, in the table's order; a column keeps its state
        across rebuilds (another grouping or report may have other phase columns)."""
        hidden = set(hidden)
        menu = self.columns.menu()
        for action in self.column_actions.values():
            menu.removeAction(action)
        for header in headers:
            action = self.column_actions.get(header)
            if action is None:
                action = QAction(header, menu)
                action.setCheckable(True)
                action.setChecked(header not in hidden)
                action.setToolTip(plain_tooltip(column_help(header)))
                action.setEnabled(header != "Operation")
                action.toggled.connect(lambda on, h=header: self.column_toggled.emit(h, on))
                self.column_actions[header] = action
            menu.addAction(action)

    def column_shown(self, header: str) -> bool:
        action = self.column_actions.get(header)
        return action is None or action.isChecked()
