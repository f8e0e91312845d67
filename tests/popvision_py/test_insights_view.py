"""The Insights page as a user sees it: the fit panel, the fullest tiles, the histogram, the
peak's variables and the findings of tutorial 4 and its OOM variant, a damaged liveness
section named, and screenshots light and dark."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from popvision_py.viewmodels.insights import InsightsViewModel
from popvision_py.views.insights.panels import TILE_ROLE
from profiler_core.insights import insights
from profiler_core.report import open_report
from tests.popvision_py.conftest import open_with_file_menu


def show_insights(window):
    window.show_view("Insights")
    view = window.current_view()
    assert view.title == "Insights" and not view.showing_message()
    return view


def test_insights_comes_first_after_summary(opened_window):
    titles = [v.title for v in opened_window.views]
    assert titles[:3] == ["Summary", "Insights", "Memory"]
    assert titles.index("Program Tree") == titles.index("Liveness") + 1


def test_tutorial4_fits_and_its_fullest_tile_is_listed_first(qtbot, opened_window, screenshot_dir):
    window = opened_window
    view = show_insights(window)
    report = window.opened[0].report
    totals = np.asarray(report.memory.by_category).sum(axis=0)
    assert view.fit.title.text() == "Fits"
    assert f"{638_976 - int(totals.max()):,} bytes of headroom" in view.fit.text.text()
    assert int(view.histogram.counts.sum()) == 1472
    assert view.histogram.limit.value() == 624.0
    tree = view.top_tiles.tree
    assert tree.topLevelItemCount() == 5
    first = tree.topLevelItem(0)
    assert first.data(0, TILE_ROLE) == int(np.argmax(totals)) == 14
    split = {
        first.child(i).text(0): int(first.child(i).text(1).replace(",", ""))
        for i in range(first.childCount())
    }
    assert sum(split.values()) == int(totals[14])
    qtbot.mouseClick(view.top_tiles.more, Qt.MouseButton.LeftButton)
    assert tree.topLevelItemCount() == 20
    tree.itemClicked.emit(tree.topLevelItem(1), 0)
    second = int(np.lexsort((np.arange(len(totals)), -totals))[1])
    assert window.opened[0].selection.tiles.tolist() == [second]
    # the peak's variables with the operation and the example's line
    view.details.setCurrentWidget(view.peak)
    model = view.peak.not_always_live.model
    assert model.data(model.index(0, 0)) == "partials"
    assert model.data(model.index(0, 2)) == "m4"
    assert model.data(model.index(0, 4)).startswith("tutorial4_matmul.py:")
    # the tile tab lists the fullest tile first
    tiles = view.tile_facts.model
    assert tiles.data(tiles.index(0, 0)) == "14"
    view.details.setCurrentWidget(view.findings)
    window.grab().save(str(screenshot_dir / "insights-fits.png"))
    window.set_theme("dark")
    QApplication.processEvents()
    window.grab().save(str(screenshot_dir / "insights-fits-dark.png"))
    window.set_theme("light")


def test_the_oom_variant_does_not_fit_and_names_m4s_exchange_and_partials(
    qtbot, window, tutorial4_oom_report, monkeypatch, screenshot_dir
):
    open_with_file_menu(qtbot, window, tutorial4_oom_report, monkeypatch)
    view = show_insights(window)
    report = open_report(tutorial4_oom_report)
    over = np.flatnonzero(np.asarray(report.memory.by_category).sum(axis=0) > 638_976)
    assert view.fit.title.text() == "Does not fit"
    assert f"{len(over):,} of 1,472 tiles" in view.fit.text.text()
    assert "debug.allowOutOfMemory" in view.fit.text.text()
    assert "No execution profile" in view.fit.missing.text()
    assert "cycle-imbalance" in view.fit.missing.text()
    top = view.findings.tree.topLevelItem(0)
    assert top.text(0).startswith("ERROR") and "Exchange buffers" in top.text(0)
    assert top.text(1).startswith("m4 (poplin::matMul) at tutorial4_matmul.py:")
    partials = view.findings.tree.topLevelItem(1)
    assert partials.text(0).startswith("ERROR") and "partials" in partials.text(0)
    assert partials.text(1) == top.text(1)
    assert top.child(top.childCount() - 1).text(0).startswith("Try: ")
    assert "availableMemoryProportion" in view.findings.suggestion.text()
    first_tile = view.top_tiles.tree.topLevelItem(0)
    assert first_tile.data(0, TILE_ROLE) in over.tolist()
    window.grab().save(str(screenshot_dir / "insights-does-not-fit.png"))
    window.set_theme("dark")
    QApplication.processEvents()
    window.grab().save(str(screenshot_dir / "insights-does-not-fit-dark.png"))
    window.set_theme("light")


def test_a_damaged_liveness_section_is_named_and_the_rest_shown(
    qtbot, window, damaged_liveness_report, monkeypatch
):
    open_with_file_menu(qtbot, window, damaged_liveness_report, monkeypatch)
    view = show_insights(window)
    assert view.fit.title.text() == "Fits"
    assert "No liveness" in view.fit.missing.text()
    assert "temporaries-at-peak" in view.fit.missing.text()
    assert "cannot be shown" in view.peak.heading.text()
    assert view.findings.tree.topLevelItemCount() >= 1


def test_the_view_model_reads_the_analysis_without_a_window(tutorial4_report):
    found = insights(open_report(tutorial4_report), top=20)
    model = InsightsViewModel(found)
    rows = model.tile_rows()
    assert [r.tile for r in rows] == found.top_tiles.tiles[:5].tolist()
    model.set_expanded(True)
    assert [r.tile for r in model.tile_rows()] == found.top_tiles.tiles.tolist()
    assert len(model.tile_rows()) == 20
    centres, counts, width = model.histogram_bars()
    assert int(counts.sum()) == 1472 and np.allclose(np.diff(centres), width)
    table = model.model_table()
    facts = {table.display(i, 0): table.display(i, 1) for i in range(len(table))}
    assert facts["Fullest tile"] == "14"
    assert not model.fit_text().startswith("tutorial4")
    assert (
        InsightsViewModel(found, "tutorial4")
        .fit_text()
        .startswith("tutorial4 (the first of the two reports compared):")
    )
    assert model.findings_summary().startswith(
        f"{len(found.findings)} findings: {len(found.findings)} info"
    )


def test_save_screenshots_includes_insights_and_the_tile_map(opened_window, screenshot_dir):
    from popvision_py.app.screenshots import save_screenshots

    saved = save_screenshots(opened_window, screenshot_dir, prefix="insights-run")
    names = {path.name for path in saved}
    for suffix in ("", "-dark"):
        assert f"insights-run-insights{suffix}.png" in names
        assert f"insights-run-memory-tile-map{suffix}.png" in names
    assert opened_window.settings.theme() == "light"
