"""Bad input never takes the window down: a clear message naming the file and the reason,
and the application stays usable afterwards."""

from __future__ import annotations

import shutil

from PySide6.QtCore import Qt

from tests.popvision_py.conftest import open_with_file_menu, wait_loaded


def assert_usable(qtbot, window, tutorial4_report, monkeypatch) -> None:
    """After a failure the window still opens a good report."""
    window.message_box.close()
    open_with_file_menu(qtbot, window, tutorial4_report, monkeypatch)
    assert [o.name for o in window.opened] == ["tutorial4"]
    assert window.current_view() is not None
    assert window.view("Summary").value("Program", "Program") == "tutorial4"


def test_a_folder_with_no_report_says_so(qtbot, window, tmp_path, tutorial4_report, monkeypatch):
    empty = tmp_path / "not-a-report"
    empty.mkdir()
    open_with_file_menu(qtbot, window, empty, monkeypatch)
    assert window.opened == []
    assert window.message_box.isVisible()
    assert window.message_box.text() == f"{empty}: no profile.pop in this folder"
    assert str(empty) in window.statusBar().currentMessage()
    assert_usable(qtbot, window, tutorial4_report, monkeypatch)


def test_a_folder_of_reports_names_the_reports_inside(qtbot, window, tutorial4_report, monkeypatch):
    # Opening a folder of reports (not a report) lists them on the Runs page (issue 40),
    # where it once was an error naming them: the rows name the reports inside.
    from tests.popvision_py.test_runs_page import cells, open_runs

    view = open_runs(qtbot, window, tutorial4_report.parent, monkeypatch)
    assert "tutorial4" in cells(view, "Report")
    assert window.opened == []


def test_a_file_of_another_kind_is_refused(qtbot, window, tmp_path, tutorial4_report, monkeypatch):
    other = tmp_path / "notes.txt"
    other.write_text("these are my notes, not a profile\n" * 20)
    window.open_paths([other])
    wait_loaded(qtbot, window)
    text = window.message_box.text()
    assert text.startswith(f"{other}: ") and "not a profile.pop" in text
    assert window.opened == []
    assert_usable(qtbot, window, tutorial4_report, monkeypatch)


def test_reload_after_the_folder_was_deleted(
    qtbot, window, tmp_path, tutorial4_report, monkeypatch
):
    copy = tmp_path / "copy"
    shutil.copytree(tutorial4_report, copy)
    open_with_file_menu(qtbot, window, copy, monkeypatch)
    window.show_view("Memory")
    shutil.rmtree(copy)
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Reload
    wait_loaded(qtbot, window)
    assert window.message_box.text() == f"{copy}: no such file or folder"
    # The report already read stays on screen and usable.
    memory = window.current_view()
    assert memory.title == "Memory" and memory.select_text("3")
    assert memory.breakdown.model.rowCount() == 16
    assert str(copy) not in window.settings.recent_reports()
    assert_usable(qtbot, window, tutorial4_report, monkeypatch)


def test_a_partial_report_opens_the_views_it_can(
    qtbot, window, damaged_liveness_report, monkeypatch
):
    open_with_file_menu(qtbot, window, damaged_liveness_report, monkeypatch)
    assert [o.name for o in window.opened] == ["damaged"]
    assert "liveness" in window.message_box.text()
    assert "some sections could not be read (liveness)" in window.statusBar().currentMessage()
    summary = window.view("Summary")
    assert "section 'liveness'" in summary.value("Liveness", "Not available")
    assert "section 'liveness'" in summary.value("Damaged sections", "liveness")
    assert summary.value("Target", "Total tiles") == "1,472"
    memory = window.view("Memory")
    assert not memory.showing_message()
    assert memory.select_text("0-3")
    assert memory.breakdown.model.columnCount() == 5


def test_a_memory_section_that_disagrees_with_the_target_is_named(
    qtbot, window, tmp_path, tutorial4_report
):
    from profiler_core.formats.profile_pop import read_profile, write_profile

    profile = read_profile(tutorial4_report / "profile.pop")
    profile.target.tiles_per_ipu = 1000  # memory still has 1472 tiles
    folder = tmp_path / "mismatch"
    folder.mkdir()
    write_profile(folder / "profile.pop", profile)
    window.open_paths([folder])
    wait_loaded(qtbot, window)
    memory = window.view("Memory")
    assert memory.showing_message()
    assert (
        "section 'memory': memory for 1472 tiles, but section 'target' has 1000 tiles"
        in memory.message.text()
    )
    assert "Not available" in [
        label for (section, label) in window.view("Summary").value_labels if section == "Memory"
    ]


def test_cancel_stops_opening_and_keeps_the_window(qtbot, window, tutorial4_report):
    window.open_paths([tutorial4_report])
    window.cancel_button.click()
    wait_loaded(qtbot, window)
    assert window.opened == []
    assert window.statusBar().currentMessage() == "Opening was cancelled."
    assert not window.progress.isVisible() and not window.cancel_button.isVisible()


def _with_created_time(folder, tutorial4_report, value: float):
    from profiler_core.formats.profile_pop import read_profile, write_profile

    folder.mkdir()
    profile = read_profile(tutorial4_report / "profile.pop")
    profile.header.created_unix = value
    write_profile(folder / "profile.pop", profile)
    shutil.copy(tutorial4_report / "debug.cbor", folder / "debug.cbor")
    return folder


def test_a_report_created_at_no_possible_time_is_named_not_a_blank_page(
    qtbot, window, tmp_path, tutorial4_report, monkeypatch
):
    folder = _with_created_time(tmp_path / "nan", tutorial4_report, float("nan"))
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    assert window.opened  # the other sections load
    failures = window.page_failures
    assert failures and "createdUnix nan is not a time" in failures[0]
    assert "createdUnix nan is not a time" in window.statusBar().currentMessage()
    assert "createdUnix nan" in window.message_box.text()
    window.show_view("Memory")
    assert window.view("Memory").models  # pages that do not need the time still work


def test_a_page_that_fails_shows_why_in_its_place(qtbot, opened_window, monkeypatch):
    memory = next(v for v in opened_window.views if v.title == "Memory")  # not built yet

    def broken(*_args):
        raise ZeroDivisionError("a bug in the Memory page")

    monkeypatch.setattr(memory, "build", broken)
    opened_window.show_view("Memory")
    assert memory.showing_message()
    assert "ZeroDivisionError: a bug in the Memory page" in memory.message.text()
    assert opened_window.page_failures[-1].startswith("The Memory page could not show tutorial4")
