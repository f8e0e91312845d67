"""A details tab's table with a heading, a search box and a row count, or a message in its
place: the one widget the Liveness and Memory details tabs (and others) are made of."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QStackedWidget, QVBoxLayout, QWidget

from popvision_py.viewmodels.format import format_count
from popvision_py.viewmodels.table import ColumnTable
from popvision_py.views.messages import message_label
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.table_model import (
    ColumnTableModel,
    make_table_view,
    size_columns_from_sample,
)


class TablePanel(QWidget):
    """A search box and a count of the ``noun`` rows shown, over a sortable table."""

    def __init__(self, noun: str, search_help: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.noun = noun
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setPlaceholderText(search_help)
        self.search.setToolTip(plain_tooltip(f"Show only the {noun} whose text contains this."))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        self.count = QLabel()
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable=True)
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
        size_columns_from_sample(self.table)  # never every row: 400,000 rows take seconds

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
