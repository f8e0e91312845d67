"""What the application remembers between sessions: recent reports, window layout, theme,
and which Summary blocks are folded away.

Everything goes through one ``QSettings``. Tests and ``--settings FILE`` (or the
``POPVISION_SETTINGS`` variable) give an INI file of their own, so the user's are never touched.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow

from popvision_py.viewmodels.recent import (
    MAX_RECENT,
    PAIR,
    RecentEntry,
    absolute_path,
    entry_of,
    source_key,
    with_entry,
)
from popvision_py.viewmodels.run_config import RunConfig

__all__ = ["MAX_RECENT", "AppSettings", "absolute_path", "make_settings"]
RECENT_KEY = "recent/opened"  # reports, traces and comparisons, local and ssh://, newest first

ORGANIZATION = "popvision-py"
APPLICATION = "PopVision-py"
THEMES = ("light", "dark")


def make_settings(path: str | Path | None = None) -> QSettings:
    """The settings at ``path`` (INI), else ``$POPVISION_SETTINGS``, else the user's."""
    path = path or os.environ.get("POPVISION_SETTINGS")
    if path:
        return QSettings(str(path), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, APPLICATION)


class AppSettings:
    """Typed access to the keys the application uses."""

    def __init__(self, settings: QSettings) -> None:
        self.qsettings = settings

    def recent_entries(self) -> list[RecentEntry]:
        """The Recent list: reports, traces and comparisons, newest first."""
        return [RecentEntry(text) for text in self._recent()]

    def _recent(self) -> list[str]:
        if self.qsettings.contains(RECENT_KEY):
            return self._strings(RECENT_KEY)[:MAX_RECENT]
        # the lists of earlier versions: reports, then the comparisons
        old = [source_key(p) for p in self._strings("recent/reports")]
        old += [v for v in self._strings("recent/comparisons") if v.count(PAIR) == 1]
        return list(dict.fromkeys(old))[:MAX_RECENT]

    def recent_reports(self) -> list[str]:
        """The single reports and traces of the Recent list (no comparisons)."""
        return [e.text for e in self.recent_entries() if not e.is_comparison]

    def _strings(self, key: str) -> list[str]:
        """The list of strings stored at ``key``; [] when an edited or damaged settings file
        holds something else there (a number, a map), which must not stop the window."""
        value = self.qsettings.value(key, [])
        if isinstance(value, str):  # QSettings gives a lone string for a one-item list
            value = [value]
        if not isinstance(value, list | tuple):
            return []
        return [str(v) for v in value if isinstance(v, str | Path)]

    def add_recent(self, path: str | Path) -> None:
        """Put a report, a trace or an ssh:// address first in the Recent list."""
        self.qsettings.setValue(RECENT_KEY, with_entry(self._recent(), entry_of([path])))

    def remove_recent(self, path: str | Path) -> None:
        gone = entry_of([path])
        self.qsettings.setValue(RECENT_KEY, [e for e in self._recent() if e != gone])

    def clear_recent(self) -> None:
        self.qsettings.setValue(RECENT_KEY, [])

    def recent_comparisons(self) -> list[tuple[str, str]]:
        """Pairs of reports compared lately, newest first."""
        pairs = [e.sources for e in self.recent_entries() if e.is_comparison]
        return [(p[0], p[1]) for p in pairs]

    def add_recent_comparison(self, a: str | Path, b: str | Path) -> None:
        self.qsettings.setValue(RECENT_KEY, with_entry(self._recent(), entry_of([a, b])))

    def recent_runs(self) -> list[RunConfig]:
        """Runs started from Run…/Record, newest first (Run again repeats the first)."""
        runs = [RunConfig.from_json(v) for v in self._strings("recent/runs")]
        return [r for r in runs if r is not None]

    def set_recent_runs(self, runs: list[RunConfig]) -> None:
        self.qsettings.setValue("recent/runs", [r.to_json() for r in runs])

    def theme(self) -> str:
        value = str(self.qsettings.value("view/theme", "light"))
        return value if value in THEMES else "light"

    def set_theme(self, name: str) -> None:
        self.qsettings.setValue("view/theme", name)

    def save_window(self, window: QMainWindow) -> None:
        self.qsettings.setValue("window/geometry", window.saveGeometry())
        self.qsettings.setValue("window/state", window.saveState())

    def restore_window(self, window: QMainWindow) -> bool:
        geometry = self.qsettings.value("window/geometry")
        state = self.qsettings.value("window/state")
        restored = isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            window.restoreState(state)
        return bool(restored)

    def closed_blocks(self, view: str) -> set[str]:
        """Titles of the blocks folded away in ``view`` (the Summary's collapsible blocks)."""
        return set(self._strings(f"{view}/closed_blocks"))

    def set_block_open(self, view: str, title: str, open_: bool) -> None:
        closed = self.closed_blocks(view) - {title} | (set() if open_ else {title})
        self.qsettings.setValue(f"{view}/closed_blocks", sorted(closed))

    def sync(self) -> None:
        self.qsettings.sync()
