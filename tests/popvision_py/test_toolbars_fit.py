"""At 1024 x 700 every page's controls show whole: the window can be that narrow (it was
held at 1,222 px by the widest controls row, so a 1024 screen cut it), no two visible
controls overlap ("Run 0: tutorial4" under "Layout:"), none is narrower than its size hint
("BSP pha", "Show max m"), and none runs past the page; tables end inside their view."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QLabel,
    QLineEdit,
    QTabBar,
    QToolBar,
    QWidget,
)

from popvision_py.app.screenshots import wait_for_pages
from tests.popvision_py.conftest import wait_loaded

CONTROLS = (QLabel, QAbstractButton, QComboBox, QLineEdit, QTabBar)
WIDTH, HEIGHT = 1024, 700


def window_rect(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def shown_controls(area: QWidget) -> list[QWidget]:
    """The controls a user sees in ``area``: visible, with something to show."""
    found = []
    for widget in area.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or not widget.isVisible():
            continue
        if isinstance(widget, QLabel) and not (widget.text() or widget.pixmap()):
            continue  # an empty error or note label draws nothing
        if isinstance(widget.parent(), QComboBox | QLineEdit | QTabBar):
            continue  # a combo's or line edit's own parts
        found.append(widget)
    return found


def problems_of(controls: list[QWidget], window: QWidget, room: QRect) -> list[str]:
    problems = []
    rects = [(w, window_rect(w, window)) for w in controls]
    for w, rect in rects:
        name = f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}"
        hint = w.sizeHint()
        wraps = isinstance(w, QLabel) and w.wordWrap()
        if not wraps and (rect.width() < hint.width() or rect.height() < hint.height()):
            problems.append(f"{name} is cut: {rect.width()}x{rect.height()} < {hint.toTuple()}")
        if not room.contains(rect):
            problems.append(f"{name} runs past the page: {rect.getCoords()}")
    for i, (a, ra) in enumerate(rects):
        for b, rb in rects[i + 1 :]:
            if a.isAncestorOf(b) or b.isAncestorOf(a):
                continue
            if ra.intersects(rb):
                problems.append(f"{type(a).__name__} and {type(b).__name__} overlap")
    return problems


@pytest.fixture
def narrow_window(qtbot, opened_window):
    window = opened_window
    window.resize(WIDTH, HEIGHT)
    qtbot.waitUntil(lambda: window.height() == HEIGHT)  # (the width is what is tested)
    return window


def test_the_window_can_be_1024_wide(narrow_window):
    assert narrow_window.minimumSizeHint().width() <= WIDTH
    assert narrow_window.width() == WIDTH


def test_every_pages_controls_show_whole_without_overlap_at_1024_x_700(
    qtbot, narrow_window, screenshot_dir
):
    window = narrow_window
    problems, counts = {}, {}
    for view in window.views:
        window.show_view(view.title)
        wait_for_pages(window)
        QApplication.processEvents()
        assert window.width() == WIDTH, view.title  # no page widens the window
        room = window_rect(view, window)
        controls = getattr(view, "controls", None)
        shown = [] if controls is None else shown_controls(controls)
        counts[view.title] = len(shown)
        found = problems_of(shown, window, room)
        if found:
            problems[view.title] = found
        slug = view.title.lower().replace(" ", "-")
        window.grab().save(str(screenshot_dir / f"narrow-{slug}.png"))
    assert problems == {}
    # the pages with a controls row were looked at, control by control
    for title in ("Memory", "Liveness", "Program Tree", "Operations", "Execution Trace"):
        assert counts[title] >= 4, (title, counts[title])


def test_the_main_toolbar_shows_every_action_at_1024(narrow_window):
    window = narrow_window
    (toolbar,) = window.findChildren(QToolBar)
    buttons = [
        toolbar.widgetForAction(a)
        for a in toolbar.actions()
        if a.isVisible() and not a.isSeparator() and toolbar.widgetForAction(a) is not None
    ]
    assert all(b.isVisible() for b in buttons)  # none pushed into the overflow menu
    assert problems_of(buttons, window, window_rect(toolbar, window)) == []


def test_tables_end_inside_their_view_at_1024_x_700(qtbot, narrow_window):
    """A table whose last column stretches ends at its view's right edge: the stretched
    column never runs past it (it did where the window was wider than the screen)."""
    window = narrow_window
    past = {}
    for view in window.views:
        window.show_view(view.title)
        wait_for_pages(window)
        QApplication.processEvents()
        for table in view.findChildren(QAbstractItemView):
            header = getattr(table, "horizontalHeader", getattr(table, "header", None))
            if header is None or not table.isVisible():
                continue
            header = header()
            if not header.stretchLastSection() or header.count() == 0:
                continue
            fixed = sum(header.sectionSize(c) for c in range(header.count() - 1))
            if fixed < table.viewport().width() and header.length() > table.viewport().width():
                past.setdefault(view.title, []).append(
                    f"{type(table).__name__}: {header.length()} > {table.viewport().width()}"
                )
    assert past == {}


def test_compared_reports_fit_1024_too(qtbot, window, tutorial4_report, tutorial4_variant_report):
    """Compare mode adds the A/B legend and a second chart: still no page widens the
    window (Memory's chart titles wrap rather than hold it at 1,072 px)."""
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    window.resize(WIDTH, HEIGHT)
    qtbot.waitUntil(lambda: window.height() == HEIGHT)
    problems = {}
    for view in window.views:
        window.show_view(view.title)
        wait_for_pages(window)
        QApplication.processEvents()
        assert window.width() == WIDTH, view.title
        controls = getattr(view, "controls", None)
        shown = [] if controls is None else shown_controls(controls)
        found = problems_of(shown, window, window_rect(view, window))
        if found:
            problems[view.title] = found
    assert problems == {}
