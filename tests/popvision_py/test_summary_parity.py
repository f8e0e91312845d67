"""The Summary to Graph Analyser's parity (issue 14): target type, architecture, replicas,
framework, graph statistics, instrumentation, the options table, and blocks that stay
folded. Expected values come from the report's columns (numpy) and the example's settings."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from popvision_py.viewmodels.summary import OPTIONS_TITLE
from tests.popvision_py.conftest import wait_loaded


def open_summary(qtbot, window, path):
    window.open_paths([path])
    wait_loaded(qtbot, window)
    window.show_view("Summary")
    return window.view("Summary")


def test_summary_shows_two_replicas_for_the_replicated_example(
    qtbot, window, replicated_report, screenshot_dir
):
    summary = open_summary(qtbot, window, replicated_report)
    assert summary.value("Target", "Replicas") == "2"
    assert summary.value("Target", "IPUs per replica") == "1"
    assert summary.value("Target", "IPUs") == "2"
    assert summary.value("Target", "Target type") == "IPU Model (simulated on the host)"
    assert summary.value("Target", "Architecture").startswith("ipu2 (Mk2, GC200")
    assert summary.value("Framework", "Model") == "training"
    assert summary.value("Framework", "Replicas") == "2"
    assert summary.value("Framework", "Gradient accumulation") == "2"  # the example's
    assert summary.value("Framework", "Pipeline stages") == "not pipelined"
    summary.grab().save(str(screenshot_dir / "summary-replicated.png"))
    window.set_theme("dark")
    qtbot.waitUntil(lambda: summary.palette().color(summary.backgroundRole()).lightness() < 100)
    summary.grab().save(str(screenshot_dir / "summary-replicated-dark.png"))
    window.set_theme("light")


def test_summary_graph_statistics_and_instrumentation(qtbot, opened_window):
    window = opened_window
    summary = window.view("Summary")
    report = window.opened[0].report
    g, p = report.graph, report.programs
    constants = int(np.count_nonzero(g.var_is_constant))
    assert summary.value("Graph", "Variables") == f"{len(g.var_name) - constants:,}"
    assert summary.value("Graph", "Constants") == f"{constants:,}"
    assert summary.value("Graph", "Vertices") == f"{int(np.sum(g.vc_count, dtype=np.int64)):,}"
    assert summary.value("Graph", "Compute sets") == f"{len(g.cs_name):,}"
    assert summary.value("Graph", "Programs") == f"{len(p.roots):,}"
    assert summary.value("Graph", "Program steps") == f"{len(p.step_kind):,}"
    assert int(summary.value("Graph", "Edges").replace(",", "")) == g.num_edges > 0
    assert summary.value("Instrumentation", "Instrumentation") == (
        "compute, external exchange, control flow (for the execution profile)"
    )
    assert summary.value("Instrumentation", "Execution profile") == "recorded"
    assert "Framework" not in summary.blocks  # tutorial 4 uses the graph API directly


def test_options_table_filters_as_you_type(qtbot, opened_window):
    window = opened_window
    summary = window.view("Summary")
    options = window.opened[0].report.header.options
    model = summary.options_model
    assert model.rowCount() == len(options)
    keys = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert keys == sorted(options)
    values = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert values == [options[k] for k in keys]
    qtbot.keyClicks(summary.options_filter, "debug.")
    shown = [model.index(r, 0).data() for r in range(model.rowCount())]
    expected = [k for k in sorted(options) if "debug." in k.lower() or "debug." in options[k]]
    assert shown == expected and shown
    assert any(row[0] == OPTIONS_TITLE for row in summary.csv_rows())


def test_folded_blocks_stay_folded_in_the_next_session(
    qtbot, window, settings_file, tutorial4_report
):
    summary = open_summary(qtbot, window, tutorial4_report)
    block = summary.blocks["Graph"]
    assert block.content.isVisible()
    qtbot.mouseClick(block.header, Qt.MouseButton.LeftButton)
    assert not block.content.isVisible() and not block.is_open
    window.settings.sync()
    again = MainWindow(AppSettings(make_settings(settings_file)))
    qtbot.addWidget(again)
    again.show()
    again.open_paths([tutorial4_report])
    wait_loaded(qtbot, again)
    again.show_view("Summary")
    reopened = again.view("Summary").blocks
    assert not reopened["Graph"].is_open and reopened["Target"].is_open
    qtbot.mouseClick(reopened["Graph"].header, Qt.MouseButton.LeftButton)
    assert reopened["Graph"].content.isVisible()
    assert "Graph" not in again.settings.closed_blocks("summary")
