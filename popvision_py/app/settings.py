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

from popvision_py.viewmodels.run_config import RunConfig

ORGANIZATION = "popvision-py"
APPLICATION = "PopVision-py"
MAX_RECENT = 12
THEMES = ("light", "dark")


def make_settings(path: str | Path | None = None) -> QSettings:
    """The settings at ``path`` (INI), else ``$POPVISION_SETTINGS``, else the user's."""
    path = path or os.environ.get("POPVISION_SETTINGS")
    if path:
        return QSettings(str(path), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, APPLICATION)


def absolute_path(path: str | Path) -> str:
    """``path`` with links followed as far as they go: ``os.path.realpath`` stops at a
    symlink loop (``ln -s L L``) where ``Path.resolve`` raises RuntimeError; a path no file
    can have (an embedded NUL) is kept as it was typed, made absolute."""
    try:
        return os.path.realpath(path)
    except ValueError:
        return os.path.abspath(path)


class AppSettings:
    """Typed access to the keys the application uses."""

    def __init__(self, settings: QSettings) -> None:
        self.qsettings = settings

    def recent_reports(self) -> list[str]:
        return self._strings("recent/reports")

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
        text = absolute_path(path)
        recent = [text] + [p for p in self.recent_reports() if p != text]
        self.qsettings.setValue("recent/reports", recent[:MAX_RECENT])

    def remove_recent(self, path: str | Path) -> None:
        text = absolute_path(path)
        self.qsettings.setValue("recent/reports", [p for p in self.recent_reports() if p != text])

    def clear_recent(self) -> None:
        self.qsettings.setValue("recent/reports", [])

    def recent_comparisons(self) -> list[tuple[str, str]]:
        """Pairs of report folders compared lately, newest first (stored as "A\tB")."""
        pairs = [v.split("\t") for v in self._strings("recent/comparisons")]
        return [(p[0], p[1]) for p in pairs if len(p) == 2]

    def add_recent_comparison(self, a: str | Path, b: str | Path) -> None:
        text = f"{absolute_path(a)}\t{absolute_path(b)}"
        old = ["\t".join(p) for p in self.recent_comparisons()]
        recent = [text] + [p for p in old if p != text]
        self.qsettings.setValue("recent/comparisons", recent[:MAX_RECENT])

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
