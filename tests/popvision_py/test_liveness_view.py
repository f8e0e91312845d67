"""The Liveness report driven through the real window: clicking the chart, scopes, the shared
selection, the details tabs and a damaged report. Expected values come from
profiler_core.analysis.liveness and `popvision-cli summary --json`."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
from PySide6.QtCore import QPointF, Qt

from popvision_py.app.screenshots import save_liveness_screenshots
from popvision_py.viewmodels.curve_pixels import BAND, MARK, SELECTED
from popvision_py.views.table_model import RAW_ROLE
from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.analysis.liveness_tiles import liveness_on_tiles
from profiler_core.analysis.vertices import compute_set_vertices
from profiler_core.report import open_report
from tests.popvision_py.conftest import open_with_file_menu, wait_loaded
from tests.popvision_py.test_memory_view import type_selection


def show_liveness(window):
    window.show_view("Liveness")
    view = window.current_view()
    assert view.title == "Liveness"
    assert not view.showing_message(), view.message.text()
    view.chart.plot.viewport().repaint()
    return view


def chart_point(chart, x: float, y: float):
    return chart.plot.mapFromScene(chart.view_box.mapViewToScene(QPointF(x, y)))


def click_step(qtbot, view, step: int, shift: bool = False) -> None:
    chart = view.chart
    y = float(chart.model.curve()[step]) / 2
    modifier = Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier.NoModifier
    qtbot.mouseClick(
        chart.plot.viewport(), Qt.MouseButton.LeftButton, modifier, chart_point(chart, step, y)
    )


def column_of(model, header: str) -> list:
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    column = headers.index(header)
    return [model.index(r, column).data(RAW_ROLE) for r in range(model.rowCount())]


def headers_of(model) -> list[str]:
    return [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]


def cli_summary(folder) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "summary", "--json", str(folder)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(result.stdout)


def test_clicking_the_peak_step_lists_its_live_variables_largest_first(
    qtbot, opened_window, tutorial4_report
):
    window = opened_window
    view = show_liveness(window)
    report = window.opened[0].report
    peak = liveness_table(report).peak_step
    click_step(qtbot, view, peak)
    assert window.opened[0].selection.steps.tolist() == [peak]
    view.details.setCurrentWidget(view.not_always_live)
    expected = variables_live_at(report, peak)
    model = view.not_always_live.model
    assert len(expected) > 0
    assert column_of(model, "Variable") == expected.names
    assert column_of(model, "Size") == expected.bytes.tolist()
    assert column_of(model, "Debug context") == expected.debug_names
    assert column_of(model, "Live from") == expected.first.tolist()
    # the selected step is marked on the chart: its pixel column is drawn in the mark colour
    chart = view.chart
    chart.plot.viewport().repaint()
    x0, x1 = chart.area.shown_x
    width = chart.area.shown.size
    centre = int((peak - x0) / (x1 - x0) * width)
    assert tuple(chart.area._pixels[0, centre]) == tuple(chart.area.colors[MARK])
    # the rest of the step's width is shaded above the curve
    columns = np.flatnonzero(chart.area.shown == peak)
    edge = int(columns[0]) if int(columns[0]) != centre else int(columns[-1])
    assert tuple(chart.area._pixels[0, edge]) == tuple(chart.area.colors[SELECTED])


def test_the_peak_label_equals_popvision_cli_summary(opened_window, tutorial4_report):
    view = show_liveness(opened_window)
    summary = cli_summary(tutorial4_report)
    text = view.chart.peak_label.text()
    assert f"({summary['peak_live_bytes']:,} bytes)" in text
    assert f"at step {summary['peak_live_step']:,} {summary['peak_live_step_name']}" in text
    step, size = view.model.peak()
    assert (step, size) == (summary["peak_live_step"], summary["peak_live_bytes"])
    # the marker sits on the peak
    xs, ys = view.chart.peak_marker.getData()
    assert (xs.tolist(), ys.tolist()) == ([step], [size])


def test_scopes_and_always_live_follow_profiler_core(qtbot, opened_window):
    window = opened_window
    view = show_liveness(window)
    report = window.opened[0].report
    table = liveness_table(report)
    controls = view.control_bar
    assert [controls.scope_box.itemText(i) for i in range(controls.scope_box.count())] == [
        "All IPUs",
        "IPU 0",
        "Selected tiles",
    ]
    assert np.array_equal(view.chart.area.curve, table.live_bytes(True))
    qtbot.mouseClick(controls.include_always_live, Qt.MouseButton.LeftButton)
    assert np.array_equal(view.chart.area.curve, table.live_bytes(False))
    qtbot.mouseClick(controls.include_always_live, Qt.MouseButton.LeftButton)
    controls.scope_box.setCurrentText("IPU 0")
    assert np.array_equal(view.chart.area.curve, table.live_bytes(True))
    controls.scope_box.setCurrentText("Selected tiles")
    assert "No tile selected" in view.chart.peak_label.text()
    assert not view.chart.area.curve.any()
    controls.scope_box.setCurrentText("All IPUs")
    type_selection(qtbot, view, "0-3,100")  # typing tiles switches to their scope
    assert controls.scope_box.currentText() == "Selected tiles"
    tiles = np.r_[0:4, 100]
    assert window.opened[0].selection.tiles.tolist() == tiles.tolist()
    on_tiles = liveness_on_tiles(report, tiles)
    assert np.array_equal(view.chart.area.curve, on_tiles.live_bytes(True))
    assert f"at step {on_tiles.peak_step:,}" in view.chart.peak_label.text()
    # every tile, through the tile method, is exactly the whole-device table
    type_selection(qtbot, view, f"0-{report.target.num_tiles - 1}")
    assert np.array_equal(view.chart.area.curve, table.live_bytes(True))
    assert view.model.peak() == (table.peak_step, table.peak_bytes)
    type_selection(qtbot, view, "0-3,100")
    type_selection(qtbot, view, "0-x")
    assert "0-x" in controls.select_error.text()
    assert window.opened[0].selection.tiles.tolist() == tiles.tolist()


def test_tiles_selected_in_memory_narrow_the_liveness_curve(qtbot, opened_window):
    window = opened_window
    view = show_liveness(window)
    view.control_bar.scope_box.setCurrentText("Selected tiles")
    window.show_view("Memory")
    type_selection(qtbot, window.current_view(), "5,7-9")
    view = show_liveness(window)
    report = window.opened[0].report
    expected = liveness_on_tiles(report, np.array([5, 7, 8, 9])).live_bytes(True)
    assert np.array_equal(view.chart.area.curve, expected)
    assert view.control_bar.select_box.text() == "5,7-9"
    assert "4 selected tile(s)" in view.chart.title.text()


def test_steps_selected_elsewhere_fill_the_tabs_with_a_difference(opened_window):
    window = opened_window
    view = show_liveness(window)
    report = window.opened[0].report
    programs = report.programs
    compute = np.flatnonzero(programs.step_cs >= 0)
    first, last = int(compute[0]), int(compute[-1])
    selection = window.opened[0].selection
    selection.select_steps([first, last])  # as the Program Tree would
    view.details.setCurrentWidget(view.not_always_live)
    model = view.not_always_live.model
    assert headers_of(model)[-3:] == [f"Step {first:,}", f"Step {last:,}", "Difference"]
    difference_help = model.headerData(
        model.columnCount() - 1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    assert "last selected step minus the first" in difference_help
    a, b = variables_live_at(report, first), variables_live_at(report, last)
    # variable names repeat (two "partials"), so compare (name, difference) pairs by variable
    at_a = dict(zip(a.var.tolist(), a.bytes.tolist(), strict=True))
    at_b = dict(zip(b.var.tolist(), b.bytes.tolist(), strict=True))
    strings = report.graph.strings
    expected = sorted(
        (strings[int(report.graph.var_name[v])], at_b.get(v, 0) - at_a.get(v, 0))
        for v in set(at_a) | set(at_b)
    )
    shown = zip(column_of(model, "Variable"), column_of(model, "Difference"), strict=True)
    assert sorted(shown) == expected
    view.details.setCurrentWidget(view.vertices)
    vmodel = view.vertices.model
    found = compute_set_vertices(report, int(programs.step_cs[last]))
    shown = dict(
        zip(
            column_of(vmodel, "Vertex type"),
            column_of(vmodel, f"Step {last:,} vertices"),
            strict=True,
        )
    )
    assert {n: c for n, c in shown.items() if c} == dict(
        zip(found.names, found.count.tolist(), strict=True)
    )
    assert "Difference" in headers_of(vmodel)
    view.details.setCurrentWidget(view.cycles)
    cmodel = view.cycles.model
    assert column_of(cmodel, "Step") == [first, last]
    assert column_of(cmodel, "Cycles") == programs.step_cycles[[first, last], 0].tolist()
    assert column_of(cmodel, "Kind") == ["OnTileExecute", "OnTileExecute"]
    # one step: the vertices tab has no per-step columns
    selection.select_steps([first])
    view.details.setCurrentWidget(view.vertices)
    assert headers_of(view.vertices.model) == ["Vertex type", "Vertices", "Tiles"]
    # searching the table
    view.details.setCurrentWidget(view.not_always_live)
    live = variables_live_at(report, first)
    word = live.names[0]
    view.not_always_live.search.setText(word)
    assert all(word.lower() in n.lower() for n in column_of(view.not_always_live.model, "Variable"))


def test_shift_click_adds_a_step_and_the_operation_is_shaded(qtbot, opened_window):
    window = opened_window
    view = show_liveness(window)
    table = liveness_table(window.opened[0].report)
    selection = window.opened[0].selection
    peak = table.peak_step
    other = int(np.argmin(table.not_always_live[: max(peak, 1)])) if peak > 0 else peak + 5
    click_step(qtbot, view, peak)
    click_step(qtbot, view, other, shift=True)
    assert selection.steps.tolist() == [peak, other]
    click_step(qtbot, view, other, shift=True)
    assert selection.steps.tolist() == [peak]
    steps = np.arange(2, 6)
    selection.select_operation("m1", steps)  # as the Operations view would
    chart = view.chart
    chart.plot.viewport().repaint()
    column = int(np.flatnonzero(chart.area.shown == 3)[0])
    top = chart.area._pixels[0, column]  # above the curve: the band colour
    assert tuple(top) == tuple(chart.area.colors[BAND])
    assert chart.area.band[steps].all() and chart.area.band.sum() == steps.size


def test_hover_says_step_name_kind_and_bytes(qtbot, opened_window):
    view = show_liveness(opened_window)
    chart = view.chart
    model = chart.model
    step = model.peak()[0]
    qtbot.mouseMove(chart.plot.viewport(), chart_point(chart, step, 1000))
    qtbot.waitUntil(lambda: bool(chart.hover_text))
    text = chart.hover_text
    assert f"Step {step:,}: {model.step_name(step)}" in text
    assert "Kind: OnTileExecute" in text
    assert f"({int(model.curve()[step]):,} bytes)" in text


def test_wheel_zoom_drag_and_double_click_reset(qtbot, opened_window):
    view = show_liveness(opened_window)
    chart = view.chart
    n = chart.model.num_steps
    vb = chart.view_box
    painted = chart.area.paint_count
    vb.scaleBy(x=0.5, center=(n / 2, 0))
    chart.plot.viewport().repaint()
    x0, x1 = vb.viewRange()[0]
    assert x1 - x0 <= n / 2 + 1e-9 and chart.area.paint_count > painted
    assert chart.area.shown_x == (x0, x1)
    # a double-click as a mouse sends it: press, release, double-click press, release
    viewport, left = chart.plot.viewport(), Qt.MouseButton.LeftButton
    where = chart_point(chart, n / 2, 1000)
    qtbot.mouseClick(viewport, left, pos=where)
    qtbot.mouseDClick(viewport, left, pos=where)
    qtbot.mouseRelease(viewport, left, pos=where)
    x0, x1 = vb.viewRange()[0]
    assert (x0, x1) == (-0.5, n - 0.5)


def test_a_damaged_liveness_section_names_it_and_its_option(
    qtbot, window, damaged_liveness_report, monkeypatch
):
    open_with_file_menu(qtbot, window, damaged_liveness_report, monkeypatch)
    window.show_view("Liveness")
    view = window.current_view()
    assert view.showing_message()
    text = view.message.text()
    assert "liveness section" in text
    assert "autoReport.outputGraphProfile" in text


def test_liveness_screenshots_with_the_peak_selected(qtbot, opened_window, screenshot_dir):
    saved = save_liveness_screenshots(opened_window, screenshot_dir)
    assert [p.name for p in saved] == ["liveness-peak.png", "liveness-peak-dark.png"]
    assert all(p.stat().st_size > 10_000 for p in saved)
    peak = liveness_table(opened_window.opened[0].report).peak_step
    assert opened_window.opened[0].selection.steps.tolist() == [peak]


def test_export_csv_writes_the_shown_tab(qtbot, opened_window, tmp_path):
    window = opened_window
    view = show_liveness(window)
    report = window.opened[0].report
    peak = liveness_table(report).peak_step
    click_step(qtbot, view, peak)
    view.details.setCurrentWidget(view.not_always_live)
    path = tmp_path / "live.csv"
    assert view.export_csv(path)
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows[0][:2] == ["Variable", "Size"]
    assert [r[0] for r in rows[1:]] == variables_live_at(report, peak).names


def test_compare_draws_each_reports_liveness(
    qtbot, window, tutorial4_report, tutorial4_variant_report
):
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    window.show_view("Liveness")
    view = window.current_view()
    assert len(view.charts) == 2
    tables = [liveness_table(open_report(f)) for f in (tutorial4_report, tutorial4_variant_report)]
    for chart, table, name in zip(view.charts, tables, ("A: tutorial4", "B: variant"), strict=True):
        assert np.array_equal(chart.area.curve, table.live_bytes(True))
        assert chart.title.text().startswith(f"{name} — Live memory")
        assert (
            f"({table.peak_bytes:,} bytes) at step {table.peak_step:,}" in chart.peak_label.text()
        )
    qtbot.mouseClick(view.control_bar.include_always_live, Qt.MouseButton.LeftButton)
    for chart, table in zip(view.charts, tables, strict=True):
        assert np.array_equal(chart.area.curve, table.live_bytes(False))
    assert view.select_text("0-9")
    assert [o.selection.tiles.tolist() for o in window.opened] == [list(range(10))] * 2
