"""The Program Tree's details tabs for the selected line: its properties, the vertices per
codelet of its compute set, and its debug context chain."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QTabWidget

from popvision_py.viewmodels.debug_chain import MISSING_DEBUG, debug_chain, debug_contexts_table
from popvision_py.viewmodels.program_details import LineDetails
from popvision_py.views.table_page import TablePage, property_table


def show_debug_chain(page: TablePage, debug: Any, context: int) -> None:
    """The context and its parents in ``page``, or why there are none."""
    if debug is None:
        page.show_message(MISSING_DEBUG)
        return
    chain = debug_chain(debug, context)
    if not chain:
        page.show_message("This line has no debug context.")
        return
    page.show_table(debug_contexts_table(debug, chain))


class LineDetailsTabs:
    """Fills the three details tabs of the Program Tree page."""

    def __init__(self, tabs: QTabWidget) -> None:
        self.properties = TablePage()
        self.vertices = TablePage(sortable=True)
        self.debug = TablePage()
        tabs.addTab(self.properties, "Details")
        tabs.setTabToolTip(0, "The selected line's compute set, tiles, exchange bytes, cycles.")
        tabs.addTab(self.vertices, "Vertices")
        tabs.setTabToolTip(1, "Vertices of the selected step's compute set, per codelet.")
        tabs.addTab(self.debug, "Debug context")
        tabs.setTabToolTip(2, "The line's debug context and its parents (outermost last).")
        self.show_none()

    def show_none(self) -> None:
        text = "Select a line of the program tree to see its details."
        for page in (self.properties, self.vertices, self.debug):
            page.show_message(text)

    def show(self, details: LineDetails, debug: Any) -> None:
        self.properties.show_table(property_table(details.rows))
        self.vertices.show_table(
            details.vertices, "This line runs no compute set, so it has no vertices."
        )
        show_debug_chain(self.debug, debug, details.debug_context)
