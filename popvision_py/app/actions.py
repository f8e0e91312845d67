"""The window's actions, menus and toolbar, in one place, each with its shortcut and help."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QToolBar

from popvision_py.views.plain_text import plain_tooltip


class ActionOwner(Protocol):
    """The window the actions belong to: its menu bar, tool bar and the slots they call."""

    actions: Actions
    toolbar: QToolBar

    def menuBar(self) -> QMenuBar: ...

    def addToolBar(self, toolbar: QToolBar) -> None: ...

    def choose_and_open(self) -> None: ...

    def choose_and_compare(self) -> None: ...

    def choose_and_run(self) -> None: ...

    def choose_and_record(self) -> None: ...

    def reload(self) -> None: ...

    def choose_and_export_png(self) -> None: ...

    def choose_and_export_csv(self) -> None: ...

    def close_report(self) -> None: ...

    def close(self) -> bool: ...

    def show_help(self) -> None: ...

    def set_theme(self, name: str) -> None: ...


@dataclass
class Actions:
    open: QAction
    compare: QAction
    run: QAction
    record: QAction
    reload: QAction
    export_png: QAction
    export_csv: QAction
    close: QAction
    quit: QAction
    help: QAction
    light: QAction
    dark: QAction
    recent_menu: QMenu
    export_menu: QMenu


def _action(
    window: ActionOwner, text: str, tip: str, slot: object, shortcut: object = None
) -> QAction:
    action = QAction(text, window)
    action.setToolTip(plain_tooltip(tip))
    action.setStatusTip(tip)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(plain_tooltip(f"{tip} ({QKeySequence(shortcut).toString()})"))
    action.triggered.connect(slot)
    return action


def install_trace_action(window: ActionOwner, slot: object) -> QAction:
    """File > Open trace…: .pvti files, a folder of them, or Chrome trace JSON."""
    return install_file_action(window, "Open trace…", "Open a host trace: .pvti files, a "
                               "folder of them, or Chrome trace JSON (System Trace)", slot,
                               "Ctrl+Shift+O")  # fmt: skip


def install_file_action(
    window: ActionOwner, text: str, tip: str, slot: object, shortcut: object = None
) -> QAction:
    """An action put in the File menu right after Open report… (Open trace…, Open remote…)."""
    action = _action(window, text, tip, slot, shortcut)
    file_menu = window.menuBar().actions()[0].menu()
    actions = file_menu.actions()
    after = actions.index(window.actions.open) + 1 if window.actions.open in actions else 0
    file_menu.insertAction(actions[after] if after < len(actions) else None, action)
    return action


def install_actions(window: ActionOwner) -> Actions:
    """Create the actions of ``window`` and put them in its menus and toolbar."""
    w = window
    a = Actions(
        open=_action(w, "Open report…", "Open a report folder or its profile.pop",
                     w.choose_and_open, QKeySequence.StandardKey.Open),
        compare=_action(w, "Compare two reports…", "Open two reports side by side",
                        w.choose_and_compare),
        run=_action(w, "Run…", "Run a Python script (a bundled example or your own) with "
                    "reports on, watch its output, then open its report", w.choose_and_run,
                    "Ctrl+Shift+R"),
        record=_action(w, "Record…", "Run a script with PVTI tracing on and watch its "
                       "System Trace live, then open its report", w.choose_and_record),
        reload=_action(w, "Reload", "Read the open report again from disk", w.reload, "Ctrl+R"),
        export_png=_action(w, "Export view as PNG…", "Save the current view as a picture",
                           w.choose_and_export_png),
        export_csv=_action(w, "Export view as CSV…", "Save the current view's data as CSV "
                           "(Memory: bytes per tile and category)", w.choose_and_export_csv),
        close=_action(w, "Close report", "Close the open report", w.close_report,
                      QKeySequence.StandardKey.Close),
        quit=_action(w, "Quit", "Quit the application", w.close, QKeySequence.StandardKey.Quit),
        help=_action(w, "Help", "What the current view shows and how to use it", w.show_help,
                     QKeySequence.StandardKey.HelpContents),
        light=_action(w, "Light", "Light palette", lambda: w.set_theme("light")),
        dark=_action(w, "Dark", "Dark palette", lambda: w.set_theme("dark")),
        recent_menu=QMenu("Recent", w),  # reports, traces, comparisons
        export_menu=QMenu("Export", w),
    )  # fmt: skip
    a.close.setShortcuts([QKeySequence("Ctrl+W")])
    a.help.setShortcut(QKeySequence("F1"))
    themes = QActionGroup(w)
    for action in (a.light, a.dark):
        action.setCheckable(True)
        themes.addAction(action)
    a.export_menu.addAction(a.export_png)
    a.export_menu.addAction(a.export_csv)
    a.export_menu.menuAction().setToolTip("Export the current view as PNG or CSV")

    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    for action in (a.open, a.compare):
        file_menu.addAction(action)
    file_menu.addMenu(a.recent_menu)
    file_menu.addSeparator()
    for action in (a.reload, a.close):
        file_menu.addAction(action)
    file_menu.addMenu(a.export_menu)
    file_menu.addSeparator()
    file_menu.addAction(a.quit)
    run_menu = bar.addMenu("&Run")
    run_menu.addAction(a.run)
    run_menu.addAction(a.record)
    view_menu = bar.addMenu("&View")
    theme_menu = view_menu.addMenu("Theme")
    theme_menu.addAction(a.light)
    theme_menu.addAction(a.dark)
    help_menu = bar.addMenu("&Help")
    help_menu.addAction(a.help)

    toolbar = QToolBar("Main", w)
    toolbar.setObjectName("main-toolbar")
    toolbar.setMovable(False)
    for action in (a.open, a.compare, a.run, a.record, a.reload):
        toolbar.addAction(action)
    export = a.export_menu.menuAction()
    export.setText("Export")
    toolbar.addAction(export)
    toolbar.widgetForAction(export).setPopupMode(
        toolbar.widgetForAction(export).ToolButtonPopupMode.InstantPopup
    )
    toolbar.addSeparator()
    toolbar.addAction(a.help)
    w.addToolBar(toolbar)
    w.toolbar = toolbar
    return a
