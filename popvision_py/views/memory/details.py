"""The Memory report's details: the category breakdown of the selected tiles, and the
variables on them (a searchable, sortable table over numpy columns)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.colors import CATEGORY_COLORS, CATEGORY_HELP
from popvision_py.viewmodels.format import format_bytes, format_count
from popvision_py.viewmodels.memory import MemoryViewModel
from popvision_py.viewmodels.table import Column, ColumnTable
from popvision_py.viewmodels.variables import variables_table
from popvision_py.views.memory.table_panel import TilesPanel
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.table_model import ColumnTableModel, make_table_view
from profiler_core.analysis.memory import variables_on_tiles
from profiler_core.report import Report


def breakdown_table(models: list[MemoryViewModel]) -> ColumnTable:
    """Categories as rows, plus Total; a column per selected tile, or per report when comparing."""
    first = models[0]
    categories = first.categories
    labels = [c.label for c in categories] + ["Total"]
    colors = [CATEGORY_COLORS[c] for c in categories] + ["#00000000"]
    helps = "; ".join(f"{c.label}: {CATEGORY_HELP[c]}" for c in categories[:2])
    columns = [Column("Category", labels, f"Memory category ({helps} ...)", colors=colors)]
    if len(models) == 1:
        breakdown = first.breakdown()
        for header, values in zip(breakdown.headers, breakdown.values.T, strict=True):
            full = np.append(values, values.sum())
            columns.append(Column(f"{header} (bytes)", full, f"Bytes of {header}", "exact_bytes"))
        return ColumnTable(columns)
    sums = []
    for m in models:
        values = m.table.breakdown(
            m.selection if m.selection.size else np.arange(m.table.num_tiles), m.include_gaps
        )
        sums.append(np.append(values, values.sum()))
        columns.append(Column(f"{m.name} (bytes)", sums[-1], f"Bytes in {m.name}", "exact_bytes"))
    difference = sums[1] - sums[0]
    columns.append(Column("Difference (bytes)", difference, "Second minus first", "exact_bytes"))
    return ColumnTable(columns)


class MemoryDetails(QWidget):
    """The breakdown tab's content (header line, sum switch, table)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.sum_box = QCheckBox("Sum selected tiles")
        self.sum_box.setToolTip(
            plain_tooltip(
                "One column with the sum of the selected tiles instead of one column per tile "
                f"(more than {MemoryViewModel.MAX_TILE_COLUMNS} tiles are always summed)."
            )
        )
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable=False)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.sum_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)

    def show_models(self, models: list[MemoryViewModel]) -> None:
        first = models[0]
        self.model.set_table(breakdown_table(models))
        self.table.resizeColumnToContents(0)
        selection = first.selection
        gaps = "including gaps" if first.include_gaps else "excluding gaps"
        if selection.size == 0:
            self.heading.setText(
                f"No tile selected: all tiles, {gaps}. Type tiles in Select tile above, or "
                "click the chart (shift-click adds)."
            )
            return
        total = int(first.table.breakdown(selection, first.include_gaps).sum())
        self.heading.setText(
            f"{format_count(selection.size)} tile(s) selected: {first.selection_text} — "
            f"total {format_bytes(total, True, first.units)}, {gaps}"
        )


class VariablesPanel(TilesPanel):
    """Variables on the selected tiles: a search box over a sortable table."""

    noun = "variables"
    search_hint = "Search variables, debug contexts, layers, ops"
    empty_text = "Select tiles to see the variables on them."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = variables_on_tiles(report, tiles, report.debug_or_none())
        return variables_table(found, units), ""
