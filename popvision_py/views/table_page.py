"""A details page that shows a ``ColumnTable``, or a message in its place (nothing selected,
a section missing), shared by the Program Tree and Operations details tabs."""

from __future__ import annotations

from PySide6.QtWidgets import QStackedWidget

from popvision_py.viewmodels.table import Column, ColumnTable
from popvision_py.views.messages import message_label
from popvision_py.views.table_model import (
    ColumnTableModel,
    make_table_view,
    size_columns_from_sample,
)


class TablePage(QStackedWidget):
    """A table, or a message in its place."""

    def __init__(self, sortable: bool = False) -> None:
        super().__init__()
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable)
        self.message = message_label()
        self.addWidget(self.table)
        self.addWidget(self.message)

    def show_table(self, table: ColumnTable, message_if_empty: str = "") -> None:
        self.model.set_table(table)
        if len(table) == 0 and message_if_empty:
            self.show_message(message_if_empty)
            return
        self.setCurrentWidget(self.table)
        size_columns_from_sample(self.table)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.setCurrentWidget(self.message)


def property_table(rows: list[tuple[str, str]]) -> ColumnTable:
    return ColumnTable(
        [
            Column("Property", [label for label, _ in rows]),
            Column("Value", [value for _, value in rows]),
        ]
    )
