"""Turning compare mode on and off in a ``ChartDetailsView``: the legend above the controls
and the view's comparison tabs, or a message naming which side could not be compared."""

from __future__ import annotations

import logging
from typing import Protocol

from PySide6.QtWidgets import QBoxLayout, QSplitter, QTabWidget, QWidget

from popvision_py.viewmodels.compare import ComparePair, pair_of
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.compare.legend import CompareLegend
from popvision_py.views.compare.tabs import CompareTabs
from profiler_core.errors import ReportError

log = logging.getLogger(__name__)


class CompareHost(Protocol):
    """What compare mode uses of a page (``views.base.ChartDetailsView``)."""

    title: str
    needs: tuple[str, ...]
    details: QTabWidget
    splitter: QSplitter
    compare_legend: QWidget | None
    compare_tabs: object | None
    compare_problem: str
    compare_layout: QBoxLayout

    def compare_specs(self, pair: ComparePair) -> list: ...


def show_compare(view: CompareHost, opened: OpenedReport, other: OpenedReport | None) -> None:
    if view.compare_legend is None:
        view.compare_legend = CompareLegend()
        view.compare_layout.insertWidget(0, view.compare_legend)
        view.compare_tabs = CompareTabs(view.details)
    legend, tabs = view.compare_legend, view.compare_tabs
    assert isinstance(legend, CompareLegend) and isinstance(tabs, CompareTabs)
    if other is None:
        legend.show_pair(None)
        tabs.clear()
        return
    pair = pair_of(opened, other)
    legend.show_pair(
        pair, view.compare_problem and f"Report B ({pair.names[1]}): {view.compare_problem}"
    )
    if view.compare_problem:
        tabs.clear()
        return
    try:
        specs = view.compare_specs(pair)
    except (ReportError, KeyError, ValueError, IndexError) as error:
        # A side the analysis cannot read: say which, and keep the rest of the view.
        log.info("comparison of %s failed: %s", view.title, error)
        missing = pair.missing_text(*view.needs)
        tabs.show_error(missing or f"{view.title} cannot compare A and B: {error}")
        return
    tabs.show(pair, specs)
    if tabs.curves:  # the overlaid curves need room: details get half the page
        view.splitter.setSizes([1000, 1000])
