"""Compared reports' charts as a user sees them: Memory's A and B charts are one height
and one width (one category legend beside both), and each chart's title names its side as
the A/B legend does -- two folders both called tutorial4 are a/tutorial4 and b/tutorial4,
not the same title twice."""

from __future__ import annotations

import shutil

from tests.popvision_py.conftest import wait_loaded
from tests.popvision_py.test_compare_views import shown_text


def open_same_named(qtbot, window, tutorial4_report, tmp_path) -> None:
    for side in ("a", "b"):
        shutil.copytree(tutorial4_report, tmp_path / side / "tutorial4")
    window.open_paths([tmp_path / "a" / "tutorial4", tmp_path / "b" / "tutorial4"])
    wait_loaded(qtbot, window)


def test_memory_a_and_b_charts_have_one_height_one_width_and_their_own_titles(
    qtbot, window, tutorial4_report, tmp_path, screenshot_dir
):
    open_same_named(qtbot, window, tutorial4_report, tmp_path)
    window.show_view("Memory")
    memory = window.current_view()
    a, b = memory.charts
    qtbot.waitUntil(lambda: a.plot.height() > 0 and b.plot.height() > 0)
    assert a.plot.height() == b.plot.height()
    assert a.plot.width() == b.plot.width()  # tile n sits at one x on both
    assert a.height() == b.height()
    titles = [shown_text(chart.title) for chart in (a, b)]
    assert titles[0].startswith("A: a/tutorial4 — 1,472 tiles")
    assert titles[1].startswith("B: b/tutorial4 — 1,472 tiles")
    legend = shown_text(memory.compare_legend.a_label), shown_text(memory.compare_legend.b_label)
    assert legend == ("■ A: a/tutorial4", "■ B: b/tutorial4")
    assert a.legend.isVisible() and not b.legend.isVisible()  # one legend, beside both
    assert a.legend.geometry().height() > 0
    window.grab().save(str(screenshot_dir / "compare-memory-charts.png"))


def test_liveness_charts_are_titled_by_side_too(qtbot, window, tutorial4_report, tmp_path):
    open_same_named(qtbot, window, tutorial4_report, tmp_path)
    window.show_view("Liveness")
    a, b = window.current_view().charts
    assert a.title.text().startswith("A: a/tutorial4 — Live memory of All IPUs")
    assert b.title.text().startswith("B: b/tutorial4 — Live memory of All IPUs")
