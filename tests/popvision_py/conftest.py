"""Fixtures for GUI tests: a main window with settings in a temporary file, opened reports,
and the folder screenshots are saved to (``screenshots/``, git-ignored)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from profiler_core.formats.profile_pop import read_profile
from profiler_core.formats.profile_pop.writer import build_message, write_message

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "screenshots"


@pytest.fixture(autouse=True)
def _no_user_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Even a QSettings made without a path lands in a temporary folder, never the user's."""
    folder = tmp_path_factory.mktemp("qsettings")
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.NativeFormat, scope, str(folder))
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(folder))


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    return tmp_path / "settings.ini"


@pytest.fixture
def window(qtbot, settings_file: Path) -> MainWindow:
    win = MainWindow(AppSettings(make_settings(settings_file)))
    # Pages build at once when shown, as these tests check them straight after; the pages'
    # workers are tested with pages_in_worker on (test_page_compute.py).
    win.pages_in_worker = False
    win.set_theme("light")
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.loader.cancel()
    win.loader.wait(10_000)
    win.page_computer.cancel_all()
    win.page_computer.wait(10_000)
    win.after_paint.wait(10_000)


def wait_loaded(qtbot, window: MainWindow, timeout: int = 20_000) -> None:
    qtbot.waitUntil(lambda: not window.loader.busy, timeout=timeout)


def open_with_file_menu(qtbot, window: MainWindow, path: Path, monkeypatch) -> None:
    """File > Open report…, the folder picked in the dialog, then wait for the worker."""
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(path))
    window.actions.open.trigger()
    assert window.loader.busy  # the report is read off the GUI thread
    wait_loaded(qtbot, window)


@pytest.fixture
def opened_window(qtbot, window: MainWindow, tutorial4_report: Path, monkeypatch) -> MainWindow:
    open_with_file_menu(qtbot, window, tutorial4_report, monkeypatch)
    assert [o.name for o in window.opened] == ["tutorial4"]
    return window


@pytest.fixture
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def damaged_liveness_report(tmp_path: Path, tutorial4_report: Path) -> Path:
    """Tutorial 4's report with its liveness section damaged (a dtype no reader accepts)."""
    folder = tmp_path / "damaged"
    folder.mkdir()
    message = build_message(read_profile(tutorial4_report / "profile.pop"))
    message.liveness.intervalVar.dtype = ">i8"
    write_message(folder / "profile.pop", message)
    shutil.copy(tutorial4_report / "debug.cbor", folder / "debug.cbor")
    return folder
