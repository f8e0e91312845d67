"""Names from a report (program, target, folder) are shown as plain text everywhere: HTML in
them is shown literally, never rendered (no headings, links or local images)."""

from __future__ import annotations

import dataclasses
import itertools
import shutil

from PySide6 import QtGui
from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractItemView, QLabel, QToolTip, QWidget

from popvision_py.app.compare_opening import compare_paths
from popvision_py.views.plain_text import escape, plain_tooltip
from profiler_core.formats.profile_pop import read_profile, write_profile
from tests.popvision_py.conftest import open_with_file_menu, wait_loaded

HOSTILE = "<h1>big</h1><a href=x>link</a><img src=/etc/passwd>"
FOLDER = "<big>folder&amp;"  # a folder name cannot hold "/"


def _shows_literally(label: QLabel, text: str) -> bool:
    """The label holds ``text`` and shows it as typed: plain text, or rich text in which
    it was escaped."""
    if label.textFormat() == Qt.TextFormat.PlainText:
        return text in label.text()
    if label.textFormat() == Qt.TextFormat.RichText:
        return text not in label.text()  # only its escaped form can be there
    return False


def test_html_in_a_reports_names_is_shown_as_text(
    qtbot, window, tutorial4_report, tmp_path, monkeypatch
):
    folder = tmp_path / FOLDER
    shutil.copytree(tutorial4_report, folder)
    profile = read_profile(folder / "profile.pop")
    profile.header = dataclasses.replace(profile.header, program_name=HOSTILE)
    profile.target = dataclasses.replace(profile.target, version=HOSTILE)
    write_profile(folder / "profile.pop", profile)

    open_with_file_menu(qtbot, window, folder, monkeypatch)
    assert window.opened and not window.page_failures
    summary = window.view("Summary")
    values = [label for label in summary.findChildren(QLabel) if HOSTILE in label.text()]
    assert len(values) >= 2  # the program's name and the target's version
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in values)
    assert all(label.text() == HOSTILE for label in values)

    # Every page the user opens: no label that holds a name renders it.
    for title in ("Summary", "Insights", "Memory", "Liveness", "Program Tree", "Operations"):
        window.show_view(title)
        for label in window.findChildren(QLabel):
            for name in (HOSTILE, FOLDER):
                if name in label.text():
                    assert _shows_literally(label, name), (title, label.text())
    status = window.report_label
    assert FOLDER in status.text()
    assert status.textFormat() == Qt.TextFormat.PlainText
    assert FOLDER in window.windowTitle()


def test_a_failure_message_quoting_a_hostile_folder_is_plain_text(
    qtbot, window, tmp_path, monkeypatch
):
    folder = tmp_path / "<h1>big<img src=x>"
    folder.mkdir()
    (folder / "profile.pop").write_bytes(b"not a report")
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    box = window.message_box
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert str(folder) in box.text()


def test_tooltips_show_markup_literally(qtbot, window):
    tip = plain_tooltip(f"Variable: {HOSTILE}\nline two")
    assert HOSTILE not in tip and "&lt;h1&gt;" in tip  # escaped, so Qt shows it as typed
    QToolTip.showText(window.mapToGlobal(window.rect().center()), tip, window)
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text() == tip
    assert plain_tooltip("plain words") == "plain words"


def shown_literally(tip: str, name: str) -> bool:
    """A tooltip holding ``name`` shows it as typed: Qt guesses plain text for it, or the
    name is in it only escaped."""
    return not QtGui.Qt.mightBeRichText(tip) if name in tip else True


def every_tooltip(window) -> list[str]:
    """The tooltips of the window's widgets and actions, and of the first rows of its
    tables and trees (what the user can hover over)."""
    tips = [w.toolTip() for w in window.findChildren(QWidget)]
    tips += [a.toolTip() for a in window.findChildren(QAction)]
    for view in window.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        rows = range(min(model.rowCount(QModelIndex()), 30))
        list_model = isinstance(model, QAbstractListModel)  # its columnCount is private
        columns = range(1 if list_model else model.columnCount(QModelIndex()))
        for row, column in itertools.product(rows, columns):
            tips.append(str(model.data(model.index(row, column), Qt.ItemDataRole.ToolTipRole)))
    return tips


def test_tooltips_naming_hostile_report_folders_show_them_literally(
    qtbot, window, tutorial4_report, tmp_path
):
    names = ("<h1>A<img src=x>", "<big>B&amp;")
    folders = [tmp_path / name for name in names]
    for folder in folders:
        shutil.copytree(tutorial4_report, folder)
    compare_paths(window, folders)
    wait_loaded(qtbot, window)
    assert len(window.opened) == 2
    seen = set()
    for title in ("Summary", "Insights", "Memory", "Liveness", "Program Tree", "Operations"):
        window.show_view(title)
        for tip in every_tooltip(window):
            for name in names:
                if name in tip or escape(name) in tip:
                    seen.add(name)
                    assert shown_literally(tip, name), (title, tip)
    assert seen == set(names)  # the compare legend names both folders
