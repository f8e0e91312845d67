"""The window's parts for reports on another machine and for the Recent list: File > Open
remote… and the start page's button, the progress of files fetched after the first paint,
what the status bar says of a remote open, and the Recent menu (reports, traces and
comparisons, local and ssh://).

Remote addresses open through the window's one path (``open_paths``: the report loader's
worker connects and fetches, as it reads a local folder); this module only adds the ways in.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog

from popvision_py.app import compare_opening
from popvision_py.app.actions import install_file_action
from popvision_py.app.remote_dialog import RemoteDialog
from popvision_py.app.window_parts import WindowParts
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.recent import PAIR
from popvision_py.views.plain_text import plain_tooltip
from profiler_core.remote import RemoteReport


def install_remote(window: WindowParts) -> QAction:
    """File > Open remote… (after Open report…), the start page's button, and the progress
    bar for debug.cbor fetched after the first paint."""
    action = install_file_action(
        window,
        "Open remote…",
        "Open a report or trace on another machine over SSH (ssh://user@host/path)",
        lambda: choose_and_open_remote(window),
    )
    window.start_page.remote_requested.connect(action.trigger)
    action.fetch_progress = FetchProgress(window)  # kept with the action, parented to the window
    return action


def choose_and_open_remote(window: WindowParts) -> QDialog:
    recent = [e.text for e in window.settings.recent_entries() if e.is_remote]
    dialog = RemoteDialog([t for t in recent if PAIR not in t], window)

    def accepted() -> None:
        url = dialog.url()
        if url:
            window.open_paths([url])

    dialog.accepted.connect(accepted)
    dialog.open()  # window-modal, not a nested event loop: tests drive it
    window.remote_dialog = dialog
    return dialog


class FetchProgress(QObject):
    """debug.cbor coming over SSH after the first paint: the status bar's bar shows it
    (never over an open in progress, whose bar it is), then what the open said, updated."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window, self.shown = window, False
        loader = window.after_paint.loader
        loader.progress.connect(self.progress)
        for done in (loader.loaded, loader.failed, loader.cancelled):
            done.connect(lambda *_: self.done())

    def progress(self, fraction: float, text: str) -> None:
        w = self.window
        if w.loader.busy or not text.startswith("Fetching"):
            return
        self.shown = True
        w.progress.setValue(int(fraction * 1000))
        w.progress.show()
        w.statusBar().showMessage(text)

    def done(self) -> None:
        w = self.window
        if not self.shown or w.loader.busy:
            return
        self.shown = False
        if not w.traces.loader.busy:
            w.progress.hide()
            w.cancel_button.hide()
        if not any(o.errors for o in w.opened):  # else the bar says what could not be read
            w.statusBar().showMessage(remote_status(w.opened))


def remote_status(opened: list[OpenedReport]) -> str:
    """What the status bar adds for reports opened over SSH ("" for local ones)."""
    parts = []
    for o in opened:
        if isinstance(o.report, RemoteReport):
            remote = o.report.remote
            if remote.files_read:
                how = f"fetched {', '.join(remote.files_read)} ({remote.bytes_read / 1e6:.1f} MB)"
            else:
                how = "read from the local cache, nothing fetched"
            later = [n for n in remote.files if n not in remote.files_read + remote.from_cache]
            when = f"; {', '.join(later)} when needed" if later else ""
            parts.append(f"{o.report.location}: {how}{when}.")
    return " ".join(parts)


def record_recent(window: WindowParts, paths: list) -> None:
    """An opened report, or two compared, first in the Recent list."""
    if len(paths) == 2:
        window.settings.add_recent_comparison(paths[0], paths[1])
    else:
        for path in paths:
            window.settings.add_recent(path)


def fill_recent_menu(window: WindowParts) -> None:
    menu = window.actions.recent_menu
    menu.clear()
    for entry in window.settings.recent_entries():
        text = "  vs  ".join(entry.sources)
        action = menu.addAction(text)
        action.setToolTip(plain_tooltip(entry.tooltip))  # a path may hold < or &
        action.triggered.connect(lambda _=False, e=entry: open_recent(window, e.text))
    if menu.isEmpty():
        menu.addAction("(none)").setEnabled(False)
    else:
        menu.addSeparator()
        menu.addAction("Clear recent", lambda: clear_recent(window))


def open_recent(window: WindowParts, text: str) -> None:
    """Open an entry of the Recent list: one source, or two compared."""
    sources = text.split(PAIR)
    if len(sources) == 2:
        compare_opening.compare_paths(window, sources)
    else:
        window.open_paths(sources)


def clear_recent(window: WindowParts) -> None:
    window.settings.clear_recent()
    window.start_page.set_recent([])
