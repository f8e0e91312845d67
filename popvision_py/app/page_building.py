"""The main window's pages: each built the first time it is shown (its view model computed
in a worker when it has one), a page that fails saying so, the rail choosing the page shown,
and every page shown afresh when the reports change places."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QListWidget, QStackedWidget

from popvision_py.app.dialogs import show_message
from popvision_py.app.page_compute import ComputeFailure
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.base import ReportView
from popvision_py.views.plain_text import make_labels_plain

log = logging.getLogger(__name__)

HOME = "Home"


class PageBuilding:
    """Part of ``MainWindow``: it uses the window's ``views``, ``opened``, ``pages``,
    ``rail``, ``page_computer``, ``pages_in_worker``, ``page_failures``, ``_unbuilt``,
    ``actions`` and ``_update_state``."""

    views: list[ReportView]
    opened: list[OpenedReport]
    pages: QStackedWidget
    rail: QListWidget
    _unbuilt: set[str]

    def view(self, title: str) -> ReportView:
        """The page ``title``, built for the opened reports now if it was not yet (its view
        model computed on this thread, or taken over from a worker still computing it)."""
        view = next(v for v in self.views if v.title == title)
        self._build_view(view, now=True)
        return view

    def _build_view(self, view: ReportView, now: bool = False) -> None:
        """Pages are built the first time they are shown, not all when a report opens: the
        first paint waits for one page, and a page nobody opens costs nothing. A page with a
        view model to compute (``ReportView.compute``) gets it from a worker, unless ``now``
        or ``pages_in_worker`` is off, so showing it never stalls the window."""
        if view.title not in self._unbuilt or not self.opened:
            return
        first, other = self.opened[0], self.opened[1] if len(self.opened) > 1 else None
        if view.computes and self.pages_in_worker and not now:
            self.page_computer.start(view, first, other)
            return
        self.page_computer.cancel(view)
        self._show_page(view, first, other)

    def _on_page_computed(
        self, view: ReportView, first: OpenedReport, other: OpenedReport | None, ready: object
    ) -> None:
        """A page's view model arrived from its worker: build its widgets from it."""
        shown = bool(self.opened) and self.opened[0] is first
        shown = shown and (self.opened[1] if len(self.opened) > 1 else None) is other
        if view.title not in self._unbuilt or not shown:
            return  # built meanwhile (``view``), or for reports no longer open
        if isinstance(ready, ComputeFailure):
            self._unbuilt.discard(view.title)
            self._page_failed(view, first, ready.error)
            return
        view.set_computed(first, other, ready)
        self._show_page(view, first, other)

    def _show_page(self, view: ReportView, first: OpenedReport, other: OpenedReport | None) -> None:
        self._unbuilt.discard(view.title)
        try:
            view.show_reports(first, other)
            make_labels_plain(view)
        except Exception as error:  # a page's bug must not leave it silently blank
            self._page_failed(view, first, error)

    def _page_failed(self, view: ReportView, first: OpenedReport, error: BaseException) -> None:
        text = f"The {view.title} page could not show {first.name}: {type(error).__name__}: {error}"
        view.show_failure(text)
        self.page_failures.append(text)
        log.error("building the %s page", view.title, exc_info=error)
        self.statusBar().showMessage(text)
        self.message_box = show_message(self, f"{view.title} could not be shown", text)

    def current_view(self) -> ReportView | None:
        page = self.pages.currentWidget()
        return page if isinstance(page, ReportView) else None

    def show_view(self, title: str) -> None:
        titles = [HOME] + [v.title for v in self.views]
        self.rail.setCurrentRow(titles.index(title))

    def _on_rail_row(self, row: int) -> None:
        page = self.pages.widget(max(row, 0))
        if isinstance(page, ReportView):
            self._build_view(page)
        self.pages.setCurrentIndex(max(row, 0))
        view = self.current_view()
        self.actions.export_menu.setEnabled(view is not None and bool(self.opened))

    def show_reports_again(self) -> None:
        """Show the opened reports afresh in every page (A and B swapped, say)."""
        self.page_computer.cancel_all()  # pages computed for them as they were
        for view in self.views:
            view.clear()
        self._unbuilt = {view.title for view in self.views}
        current = self.current_view()
        if current is not None:
            self._build_view(current)
        self._update_state()
