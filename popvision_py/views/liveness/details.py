"""The Liveness report's details tabs: a searchable, sortable table (or a message) each."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QStackedWidget, QVBoxLayout, QWidget

from popvision_py.viewmodels.format import format_count
from popvision_py.viewmodels.table import ColumnTable
from popvision_py.views.base import message_label
from popvision_py.views.table_model import ColumnTableModel, make_table_view


class TablePanel(QWidget):
    """A search box and a row count over a sortable table of ``noun`` rows."""

    def __init__(self, noun: str, search_help: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.noun = noun
        self.search = QLineEdit()
        self.search.setPlaceholderText(search_help)
        self.search.setToolTip(f"Show only the {noun} whose text contains this.")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.count = QLabel()
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable=True)
        # fitting columns looks at the first rows only: thousands of live variables would
        # otherwise each be measured on every click
        self.table.horizontalHeader().setResizeContentsPrecision(100)
        self.message = message_label()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.table)
        self.pages.addWidget(self.message)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.search, 1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)

    def show_table(self, table: ColumnTable, heading: str = "") -> None:
        table.search(self.search.text())
        self.model.set_table(table)
        self.table.horizontalHeader().setSortIndicatorShown(False)
        self.heading.setText(heading)
        self.pages.setCurrentWidget(self.table)
        self._update_count()
        for column in range(min(len(table.columns) - 1, 8)):
            self.table.resizeColumnToContents(column)
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), 320))

    def show_message(self, text: str) -> None:
        self.model.set_table(ColumnTable([]))
        self.heading.setText("")
        self.count.setText("")
        self.message.setText(text)
        self.pages.setCurrentWidget(self.message)

    def showing_message(self) -> bool:
        return self.pages.currentWidget() is self.message

    def _on_search(self, text: str) -> None:
        self.model.search(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, size = len(self.model.table), self.model.table.size
        self.count.setText(f"{format_count(shown)} of {format_count(size)} {self.noun}")
