"""The Operations report's details tabs for the selected operation: Summary, Program Tree
(its program steps; a click selects the step), Cycles per tile, FLOPs, Shared code (with
whom it shares vertex code), Debug."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from popvision_py.viewmodels.debug_chain import MISSING_DEBUG, debug_chain, debug_contexts_table
from popvision_py.viewmodels.operations import OperationParts, OperationsViewModel
from popvision_py.views.operations.chart import TileCyclesChart
from popvision_py.views.table_page import TablePage, property_table

MAX_CONTEXTS = 2_000
"""Debug contexts listed for one operation (a layer can hold a whole model's)."""


class DebugPage(QWidget):
    """The group's first context's parent chain, and the contexts in the group."""

    def __init__(self) -> None:
        super().__init__()
        self.chain = QLabel()
        self.chain.setWordWrap(True)
        self.page = TablePage(sortable=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.chain)
        layout.addWidget(self.page, 1)

    def show_contexts(self, debug: Any, contexts: np.ndarray) -> None:
        if debug is None:
            self.chain.setText("")
            self.page.show_message(MISSING_DEBUG)
            return
        if contexts.size == 0:
            self.chain.setText("")
            self.page.show_message("This operation has no debug context.")
            return
        first = int(contexts[0])
        names = [debug.name[c] or f"context {c}" for c in debug_chain(debug, first)]
        self.chain.setText(f"Debug context chain (outermost last): {'  ←  '.join(names)}")
        shown = contexts[:MAX_CONTEXTS].tolist()
        more = contexts.size - len(shown)
        table = debug_contexts_table(debug, shown)
        self.page.show_table(table)
        if more:
            self.chain.setText(f"{self.chain.text()}\n(first {len(shown):,}; {more:,} more)")


class SharedCodePage(QWidget):
    """How much of its vertex code is its own, and the code it shares with whom."""

    def __init__(self) -> None:
        super().__init__()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.page = TablePage(sortable=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.note)
        layout.addWidget(self.page, 1)


class OperationDetails(QTabWidget):
    """Tabs filled from the view model for one operation."""

    step_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.summary = TablePage()
        self.steps = TablePage(sortable=True)
        self.cycles = TileCyclesChart()
        self.flops = TablePage(sortable=True)
        self.sharing = SharedCodePage()
        self.debug = DebugPage()
        tabs = [
            (self.summary, "Summary", "The operation's cycles, vertices, code, memory, FLOPs."),
            (self.steps, "Program Tree", "Its program steps; click one to select it everywhere."),
            (self.cycles, "Cycles", "Compute cycles per tile over its compute sets."),
            (self.flops, "FLOPs", "FLOPs and vertices per compute set and vertex type."),
            (self.sharing, "Shared code", "Vertex code it shares with other operations."),
            (self.debug, "Debug", "Its debug contexts and their parent chain."),
        ]
        for widget, title, tip in tabs:
            self.addTab(widget, title)
            self.setTabToolTip(self.count() - 1, tip)
        self.steps.table.clicked.connect(self._on_step_clicked)
        self.show_none()

    def show_none(self) -> None:
        text = "Select an operation in the table above to see its details."
        for page in (self.summary, self.steps, self.flops, self.sharing.page):
            page.show_message(text)
        self.sharing.note.setText("")
        self.cycles.show_values(np.zeros(0), text)
        self.debug.chain.setText("")
        self.debug.page.show_message(text)

    def show_operation(self, model: OperationsViewModel, parts: OperationParts) -> None:
        self.summary.show_table(property_table(model.summary_rows(parts.label)))
        self.steps.show_table(model.steps_table(parts), "This operation has no program steps.")
        values = model.tile_cycles(parts)
        busy = int(np.count_nonzero(values))
        self.cycles.show_values(
            values,
            f"Compute cycles per tile (one execution of each of its {parts.compute_sets.size} "
            f"compute set(s)); {busy:,} tiles busy. A bar covering several tiles shows the "
            "largest.",
        )
        self.flops.show_table(model.flops_table(parts), "This operation has no compute sets.")
        self.sharing.note.setText(model.sharing_summary(parts))
        self.sharing.page.show_table(
            model.sharing_table(parts), "No other operation runs its codelets on its tiles."
        )
        self.debug.show_contexts(model.debug, parts.contexts)

    def _on_step_clicked(self, index: object) -> None:
        table = self.steps.model.table
        row = index.row()  # type: ignore[attr-defined]
        if 0 <= row < len(table):
            self.step_clicked.emit(int(table.raw(row, 0)))
