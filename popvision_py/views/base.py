"""The shared shape of every report view: chart on top, details below, compare built in.

``ReportView`` is what the main window knows: ``show_reports(opened, other)`` with ``other``
set in compare mode, ``clear()``, exports and help. ``ChartDetailsView`` adds PopVision's
rhythm: a controls row, the chart area (one chart per report in compare mode) in a splitter
above a tab widget of details, and a message in place of all that when a section is missing.
"""

from __future__ import annotations

import csv
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.compare import pair_of
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.compare.mode import show_compare
from popvision_py.views.messages import message_label


class ReportView(QWidget):
    """A page of the left rail. Subclasses set ``title``, ``rail_help`` and ``needs``."""

    title = "Report"
    rail_help = ""
    needs: tuple[str, ...] = ()  # report sections without which the view cannot be shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.opened: OpenedReport | None = None
        self.other: OpenedReport | None = None

    @property
    def comparing(self) -> bool:
        return self.other is not None

    @staticmethod
    def side_titles(opened: OpenedReport, other: OpenedReport | None) -> list[str]:
        """Each shown report's title as the A/B legend names it ("A: a/tutorial4", "B:
        b/tutorial4", told apart however alike the folders); "" for a report alone."""
        if other is None:
            return [""]
        a, b = pair_of(opened, other).names
        return [f"A: {a}", f"B: {b}"]

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        self.opened, self.other = opened, other

    # -- the first show's work, off the GUI thread -------------------------------------------
    def compute(self, opened: OpenedReport, other: OpenedReport | None) -> object:
        """The page's view model for the reports: work that does not need widgets, which the
        window runs in a worker thread (``app/page_compute.py``) while the page says
        "Computing…"; ``build`` takes it back with ``computed``. It must read no widget and
        connect to nothing (it runs beside the GUI thread); it may raise. Pages that are quick
        to build leave it as it is (None: nothing to compute)."""
        return None

    @property
    def computes(self) -> bool:
        """Whether this page has work worth a worker on its first show."""
        return type(self).compute is not ReportView.compute

    def set_computed(self, opened: OpenedReport, other: OpenedReport | None, ready: object) -> None:
        """What ``compute`` made in the worker for these reports, for the build that follows."""
        self._computed = (opened, other, ready)

    def computed(self, opened: OpenedReport, other: OpenedReport | None) -> object:
        """The view model for the reports: the worker's when it made it for them, else made
        now (a page fetched with ``window.view``, rebuilt by the view itself, or in tests)."""
        ready, self._computed = getattr(self, "_computed", None), None
        if ready is not None and ready[0] is opened and ready[1] is other:
            return ready[2]
        return self.compute(opened, other)

    def show_computing(self, text: str) -> None:
        """Say that the page's view model is being computed (``text``) until it is shown."""

    def clear(self) -> None:
        self.opened = self.other = None
        self._computed = None

    def help_text(self) -> str:
        return self.rail_help

    def show_failure(self, text: str) -> None:
        """The page could not show the report (``text`` says why): show nothing of it."""
        self.clear()

    def csv_rows(self) -> list[list[object]] | None:
        """The rows ``Export CSV`` writes, or None when the view has no table to export."""
        return None

    def export_png(self, path: str | Path) -> bool:
        return self.grab().save(str(path))

    def export_csv(self, path: str | Path) -> bool:
        rows = self.csv_rows()
        if rows is None:
            return False
        with open(path, "w", newline="", encoding="utf-8") as stream:
            csv.writer(stream).writerows(rows)
        return True


def _computing_page() -> tuple[QWidget, QLabel]:
    """A message over a busy bar, shown while the page's view model is computed."""
    page = QWidget()
    column = QVBoxLayout(page)
    column.addStretch(1)
    label = message_label()
    busy = QProgressBar()
    busy.setRange(0, 0)  # no figure to show: it only says work is going on
    busy.setTextVisible(False)
    busy.setFixedWidth(240)
    busy.setToolTip("The page's data is computed off the window's thread.")
    column.addWidget(label)
    column.addWidget(busy, 0, Qt.AlignmentFlag.AlignHCenter)
    column.addStretch(1)
    return page, label


class ChartDetailsView(ReportView):
    """Controls, then a chart over a details tab widget; or a message when data is missing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controls = QWidget()
        self.controls_layout = QHBoxLayout(self.controls)
        self.controls_layout.setContentsMargins(8, 6, 8, 2)
        self.chart_area = QWidget()
        self.chart_layout = QVBoxLayout(self.chart_area)
        self.chart_layout.setContentsMargins(0, 0, 0, 0)
        self.chart_layout.setSpacing(2)
        self.details = QTabWidget()
        self.details.setDocumentMode(True)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.chart_area)
        self.splitter.addWidget(self.details)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        self.compare_layout = layout  # compare mode puts its legend first (views/compare)
        self.compare_legend: QWidget | None = None
        self.compare_tabs: object | None = None
        self.compare_problem = ""  # why report B cannot be shown here ("" when it can)
        layout.addWidget(self.controls)
        layout.addWidget(self.splitter, 1)
        self.message = message_label()
        self.computing_page, self.computing_label = _computing_page()
        self.pages = QStackedWidget()
        self.pages.addWidget(content)
        self.pages.addWidget(self.message)
        self.pages.addWidget(self.computing_page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.pages)

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        super().show_reports(opened, other)
        problem = opened.missing_text(*self.needs)
        self.compare_problem = other.missing_text(*self.needs) if other is not None else ""
        if problem and other is not None:
            problem = f"Report A ({opened.name}): {problem}\n\nSwap A and B to see B here."
        if not problem:
            # A B this view cannot read leaves A shown alone, the legend saying why.
            problem = self.build(opened, None if self.compare_problem else other)
        if problem:
            self.show_message(problem)
        else:
            self.pages.setCurrentIndex(0)
            self._fresh = True  # the chart gets its share when the page is next shown
            self._show_compare(opened, other)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if getattr(self, "_fresh", False):
            self._fresh = False
            self.give_chart_room()

    def give_chart_room(self) -> None:
        """Chart on top: the chart area gets at least 3/5 of the page's height over the
        details. A page laid out while hidden left it at its minimum (a tile map a 20 px
        strip); a splitter the user moved since is kept unless the chart is under half."""
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if total > 0 and sizes[0] < total // 2:
            top = total * 3 // 5
            self.splitter.setSizes([top, total - top])

    def showing_compare_tab(self) -> bool:
        """The details show a comparison tab (not one of the view's own)."""
        pages = getattr(self.compare_tabs, "pages", {})
        return any(p is self.details.currentWidget() for p in pages.values())

    def compare_specs(self, pair: object) -> list:
        """The comparison tables of this view (``viewmodels/compare_tables.py``); none
        unless the view says what it compares."""
        return []

    def _show_compare(self, opened: OpenedReport, other: OpenedReport | None) -> None:
        """Compare mode, written once for every view: the A/B legend on top and the view's
        comparison tabs first in its details."""
        show_compare(self, opened, other)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.pages.setCurrentWidget(self.message)

    def show_failure(self, text: str) -> None:
        self.show_message(text)

    def show_computing(self, text: str) -> None:
        self.computing_label.setText(text)
        self.pages.setCurrentWidget(self.computing_page)

    def showing_computing(self) -> bool:
        """The page waits for its view model (``show_computing``)."""
        return self.pages.currentWidget() is self.computing_page

    def showing_message(self) -> bool:
        return self.pages.currentWidget() is self.message

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        """Fill the chart area and details for the reports; return a problem or ""."""
        raise NotImplementedError

    def clear(self) -> None:
        super().clear()
        if self.compare_tabs is not None:
            self.compare_tabs.clear()  # type: ignore[attr-defined]
        if self.compare_legend is not None:
            self.compare_legend.hide()
        self.show_message("No report is open.")
