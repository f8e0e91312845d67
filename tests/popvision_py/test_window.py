"""The window around the views: Summary, compare, recent reports, drag-and-drop, keys, help,
themes, the command line's screenshots, and Run… as a child process."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent, QKeySequence
from PySide6.QtWidgets import QLabel

from popvision_py.__main__ import main
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from profiler_core.analysis.memory import memory_table
from profiler_core.report import open_report
from tests.popvision_py.conftest import wait_loaded


def test_summary_shows_program_target_memory_and_runs(qtbot, opened_window, screenshot_dir):
    window = opened_window
    assert window.current_view().title == "Summary"
    summary = window.view("Summary")
    report = open_report(window.opened[0].folder)
    table = memory_table(report)
    assert summary.value("Program", "Program") == "tutorial4"
    assert summary.value("Program", "Producer") == f"ipu_engine {report.header.producer_version}"
    assert summary.value("Target", "IPU version") == "ipu2"
    assert summary.value("Target", "Clock") == "1,330 MHz"
    total = int(table.total(True).sum())
    assert f"({total:,} bytes)" in summary.value("Memory", "Total memory used")
    assert summary.value("Memory", "Tiles over the limit") == "0"
    cycles = report.execution.runs[0].total_cycles
    seconds = cycles / report.target.clock_hz
    assert (
        summary.value("Execution", "Run 0 (tutorial4)")
        == f"{cycles:,} cycles, {seconds * 1e6:.3g} µs"
    )
    assert summary.value("Report files", "profile.pop").endswith(
        f"({(window.opened[0].folder / 'profile.pop').stat().st_size:,} bytes)"
    )
    assert window.windowTitle() == "tutorial4 — PopVision-py"
    summary.grab().save(str(screenshot_dir / "summary.png"))
    window.set_theme("dark")
    qtbot.waitUntil(lambda: summary.palette().color(summary.backgroundRole()).lightness() < 100)
    # the rail has a style sheet of its own; it must follow the palette too (below its items)
    rail = window.rail.grab().toImage()
    assert rail.pixelColor(rail.width() // 2, rail.height() - 5).lightness() < 100
    summary.grab().save(str(screenshot_dir / "summary-dark.png"))
    window.show_view("Memory")
    window.current_view().grab().save(str(screenshot_dir / "memory-dark.png"))


def test_compare_shows_both_reports(qtbot, window, tutorial4_report, tutorial4_variant_report):
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    assert window.windowTitle() == "tutorial4 vs variant — PopVision-py"
    summary = window.view("Summary")
    assert summary.value("Program", "Program", 0) == "tutorial4"
    assert summary.value("Program", "Program", 1) == "variant"
    window.show_view("Memory")
    memory = window.current_view()
    assert len(memory.charts) == 2
    assert memory.select_text("0-9")
    assert [m.selection.tolist() for m in memory.models] == [list(range(10))] * 2
    model = memory.breakdown.model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    assert headers == [
        "Category",
        "A: tutorial4 (bytes)",
        "B: variant (bytes)",
        "Difference (bytes)",
    ]
    a = memory_table(open_report(tutorial4_report)).breakdown(np.arange(10))
    b = memory_table(open_report(tutorial4_variant_report)).breakdown(np.arange(10))
    last = model.rowCount() - 1
    shown = [int(model.index(last, c).data().replace(",", "")) for c in (1, 2, 3)]
    assert shown == [int(a.sum()), int(b.sum()), int(b.sum() - a.sum())]


def test_recent_reports_are_kept_in_the_settings_file(
    qtbot, opened_window, settings_file, tutorial4_report
):
    opened_window.close()
    again = MainWindow(AppSettings(make_settings(settings_file)))
    qtbot.addWidget(again)
    assert again.settings.recent_reports() == [str(tutorial4_report.resolve())]
    assert again.start_page.recent.count() == 1
    again.actions.recent_menu.aboutToShow.emit()
    assert again.actions.recent_menu.actions()[0].text() == str(tutorial4_report.resolve())
    item = again.start_page.recent.item(0)
    again.start_page.recent.itemClicked.emit(item)
    wait_loaded(qtbot, again)
    assert [o.name for o in again.opened] == ["tutorial4"]
    assert "settings.ini" in again.settings.qsettings.fileName()


def test_dropping_a_folder_opens_it(qtbot, window, tutorial4_report):
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(tutorial4_report))])
    event = QDropEvent(
        QPoint(500, 400).toPointF(),
        Qt.DropAction.CopyAction,
        data,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    wait_loaded(qtbot, window)
    assert [o.name for o in window.opened] == ["tutorial4"]


def test_shortcuts_help_and_close(qtbot, opened_window):
    window = opened_window
    actions = window.actions
    assert actions.open.shortcut() == QKeySequence("Ctrl+O")
    assert actions.reload.shortcut() == QKeySequence("Ctrl+R")
    assert QKeySequence("Ctrl+W") in actions.close.shortcuts()
    assert actions.help.shortcut() == QKeySequence("F1")
    assert actions.record.isEnabled() and "PVTI" in actions.record.toolTip()
    assert actions.run.shortcut() == QKeySequence("Ctrl+Shift+R")
    window.show_view("Memory")
    qtbot.keyClick(window, Qt.Key.Key_F1)
    assert window.message_box.isVisible()
    assert "0,5,100-120" in window.message_box.text()
    window.message_box.close()
    qtbot.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert window.opened == [] and window.pages.currentWidget() is window.start_page
    assert window.windowTitle() == "PopVision-py"
    assert not window.rail.item(2).flags() & Qt.ItemFlag.ItemIsEnabled


def test_every_rail_page_explains_itself(opened_window):
    window = opened_window
    titles = [window.rail.item(row).text() for row in range(window.rail.count())]
    assert titles == ["Home", "Summary", "Insights", "Memory", "Liveness", "Program Tree",
                      "Operations", "Operations Graph", "Execution Trace", "System Trace",
                      "Runs"]  # fmt: skip
    for row in range(window.rail.count()):
        assert window.rail.item(row).toolTip()
    for view in window.views:  # every page is real: none says it is coming soon
        window.show_view(view.title)
        assert "coming soon" not in " ".join(w.text() for w in view.findChildren(QLabel))
    memory = window.view("Memory")
    bar = memory.control_bar
    for widget in (
        bar.select_box,
        bar.include_gaps,
        bar.show_max,
        bar.sort,
        bar.layout_box,
        bar.reset_zoom,
    ):
        assert len(widget.toolTip()) > 20


def test_theme_is_remembered(qtbot, window, settings_file):
    window.actions.dark.trigger()
    qtbot.waitUntil(lambda: window.palette().color(window.backgroundRole()).lightness() < 100)
    assert window.actions.dark.isChecked()
    window.close()
    assert AppSettings(make_settings(settings_file)).theme() == "dark"
    window.set_theme("light")


def test_screenshot_dir_renders_every_view(tutorial4_report, tmp_path, settings_file, capsys):
    out = tmp_path / "shots"
    assert (
        main(
            ["--settings", str(settings_file), "--screenshot-dir", str(out), str(tutorial4_report)]
        )
        == 0
    )
    printed = capsys.readouterr().out.split()
    names = {p.rsplit("/", 1)[-1] for p in printed}
    assert {
        "01-summary.png",
        "02-insights.png",
        "03-memory.png",
        "memory-heat-map.png",
        "summary-dark.png",
    } <= names
    assert all((out / name).stat().st_size > 5_000 for name in names)


def test_run_launches_an_example_as_a_child_process(qtbot, window, tmp_path):
    from popvision_py.app.runner import bundled_examples

    script = next(p for p in bundled_examples() if p.name == "tutorial4_matmul.py")
    with qtbot.waitSignal(window.runner.report_ready, timeout=120_000) as ready:
        window.runner.run(script, tmp_path / "runs")
    assert ready.args[0] == str(tmp_path / "runs" / "tutorial4")
    wait_loaded(qtbot, window)
    assert [o.name for o in window.opened] == ["tutorial4"]


def test_pages_are_built_when_first_shown_not_all_at_open(qtbot, opened_window) -> None:
    memory = next(v for v in opened_window.views if v.title == "Memory")
    assert not memory.models  # opening built the Summary page only
    opened_window.show_view("Memory")
    assert memory.models and memory.models[0].table.num_tiles == 1472
    opened_window.show_view("Summary")
    opened_window.reload()
    wait_loaded(qtbot, opened_window)
    assert not memory.models  # the reloaded report is shown again only where it is looked at
    assert opened_window.view("Memory") is memory and memory.models
