"""Compare mode in every view, through the one mechanism (views/compare): tutorial 4 against
its --m1 1600x700 --m2 700x300 variant. The numbers shown equal ``popvision-cli compare
--json`` and each report's own analyses; Swap A and B swaps them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from popvision_py.app import compare_opening
from popvision_py.app.compare_opening import choose_and_compare
from popvision_py.viewmodels.compare import A_COLOR
from popvision_py.views.compare.legend import side_html
from popvision_py.views.plain_text import rich_label
from popvision_py.views.table_model import RAW_ROLE
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.memory import memory_table
from profiler_core.cli.output import category_column
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report
from tests.popvision_py.conftest import wait_loaded

# Issue 20 calibrated the sync: 124 cycles plus the IPU Model's default relative sync
# delay of 150, where these figures were pinned with 60; each run of tutorial 4 has four
# syncs (two per matmul), so its cycles grew by 4 x SYNC_ADDED.
SYNC_ADDED = 124 + 150 - 60


ROOT = Path(__file__).resolve().parents[2]


def cli_compare(a: Path, b: Path) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "compare", str(a), str(b), "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=True,
    )  # fmt: skip
    return json.loads(result.stdout)


def rows_of(panel) -> dict[str, list]:
    """Key -> the raw values of the other columns, for every row shown."""
    model = panel.model
    out = {}
    for row in range(model.rowCount()):
        values = [model.data(model.index(row, c), RAW_ROLE) for c in range(model.columnCount())]
        out[values[0]] = values[1:]
    return out


@pytest.fixture
def compared(qtbot, window, tutorial4_report, tutorial4_variant_report):
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    return window


def test_every_view_compares_and_equals_the_cli(
    compared, tutorial4_report, tutorial4_variant_report
):
    cli = cli_compare(tutorial4_report, tutorial4_variant_report)
    summary = compared.view("Summary")
    memory_rows = rows_of(summary.compare_block.tabs.panels["Memory"])
    labels = {category_column(c.label): c.label for c in MemoryCategory}
    for row in cli["memory_by_category"]:  # A, B and the difference equal the CLI's
        a, b, diff = memory_rows[labels[row["category"]]][:3]
        assert (a, b, diff) == (row["a"], row["b"], row["diff"])
    cycles_rows = rows_of(summary.compare_block.tabs.panels["Cycles"])
    for row in cli["cycles_by_step_kind"]:
        assert cycles_rows[row["kind"]][:3] == [row["a"], row["b"], row["diff"]]
    assert (
        cycles_rows["total (runs)"][0] == 22756 + 4 * SYNC_ADDED
    )  # each run's cycles summed (one run)

    view = compared.view("Operations")
    group_by = view.control_bar.group_by
    group_by.setCurrentIndex(group_by.findData("name"))  # the CLI's default grouping
    operations = rows_of(view.compare_tabs.panels["Compare: cycles"])
    for row in cli["operations_by_name"]:
        assert operations[row["key"]][:3] == [
            row["total_cycles_a"],
            row["total_cycles_b"],
            row["total_cycles_diff"],
        ]
    changed = {k for k, v in operations.items() if v[-1] == "changed"}
    assert changed == {"m4", "m5"}  # only the matmuls that ran changed cycles

    # Liveness: each side's peak equals that report's own liveness analysis
    a_table = liveness_table(open_report(tutorial4_report))
    b_table = liveness_table(open_report(tutorial4_variant_report))
    panel = compared.view("Liveness").compare_tabs.panels["Compare: steps"]
    live = rows_of(panel)
    assert max(v[0] for v in live.values()) == a_table.peak_bytes
    assert max(v[1] for v in live.values()) == b_table.peak_bytes
    assert f"at step {a_table.peak_step}" in panel.heading.text()

    tabs = compared.view("Memory").compare_tabs
    memory = tabs.panels["Compare: variables"]
    assert memory.showing_message()  # made when first opened, not with the page
    compared.show_view("Memory")
    tabs.details.setCurrentWidget(memory)
    variables = rows_of(memory)
    assert variables["m1"][:2] == [900 * 600 * 4, 1600 * 700 * 4]  # float32 matrices by hand

    programs = rows_of(compared.view("Program Tree").compare_tabs.panels["Compare: programs"])
    a, b = 22756 + 4 * SYNC_ADDED, 39604 + 4 * SYNC_ADDED
    assert programs["(program root)"][:3] == [a, b, b - a]  # roots matched

    trace = compared.view("Execution Trace").compare_tabs.panels["Compare: runs"]
    assert rows_of(trace)["run 0"][:3] == [a, b, 16848]
    for title in ("Memory", "Liveness", "Operations", "Program Tree", "Execution Trace"):
        legend = compared.view(title).compare_legend
        assert legend.isVisibleTo(compared.view(title))
        assert legend.names == ("tutorial4", "variant")


def test_swap_swaps_every_view(qtbot, compared):
    compared.show_view("Operations")
    group_by = compared.view("Operations").control_bar.group_by
    group_by.setCurrentIndex(group_by.findData("name"))
    compared.swap_action.trigger()
    assert [o.name for o in compared.opened] == ["variant", "tutorial4"]
    operations = rows_of(compared.view("Operations").compare_tabs.panels["Compare: cycles"])
    a, b = 28801 + 2 * SYNC_ADDED, 15808 + 2 * SYNC_ADDED  # two syncs per matmul
    assert operations["m4"][:3] == [a, b, b - a]
    assert compared.view("Memory").compare_legend.names == ("variant", "tutorial4")
    assert "variant vs tutorial4" in compared.windowTitle()


def test_same_folder_names_are_told_apart(qtbot, window, tutorial4_report, tmp_path):
    for side in ("a", "b"):
        shutil.copytree(tutorial4_report, tmp_path / side / "tutorial4")
    window.open_paths([tmp_path / "a" / "tutorial4", tmp_path / "b" / "tutorial4"])
    wait_loaded(qtbot, window)
    summary = window.view("Summary")
    assert summary.compare_block.legend.names == ("a/tutorial4", "b/tutorial4")
    assert "a/tutorial4 vs b/tutorial4" in window.windowTitle()
    notes = summary.compare_block.legend.banner.text()
    assert "no difference" not in notes  # two folders, even with equal contents
    rows = rows_of(summary.compare_block.tabs.panels["Memory"])
    assert all(v[2] == 0 for v in rows.values())  # copies: every difference is 0


def test_a_report_with_itself_says_there_is_no_difference(qtbot, window, tutorial4_report):
    window.open_paths([tutorial4_report, tutorial4_report])
    wait_loaded(qtbot, window)
    legend = window.view("Operations").compare_legend
    assert "no difference" in legend.banner.text() and legend.banner.isVisibleTo(legend)


def test_one_ipu_against_four_ipus_in_every_view(
    qtbot, window, tutorial4_report, four_shards_report
):
    window.open_paths([tutorial4_report, four_shards_report])
    wait_loaded(qtbot, window)
    for view in window.views:
        window.show_view(view.title)
    assert window.page_failures == []
    banner = window.view("Memory").compare_legend.banner.text()
    assert "1 IPU(s) vs 4" in banner and "per-tile differences are not" in banner
    rows = rows_of(window.view("Summary").compare_block.tabs.panels["Memory"])
    a = open_report(tutorial4_report)
    b = open_report(four_shards_report)
    assert rows["Total (gaps included)"][:2] == [
        int(memory_table(a).total().sum()),
        int(memory_table(b).total().sum()),
    ]


def test_dialog_labels_and_recent_comparisons(
    qtbot, window, tutorial4_report, tutorial4_variant_report
):
    dialog = choose_and_compare(window)
    dialog.source.setText(str(tutorial4_report))
    dialog.target.setText(str(tutorial4_variant_report))
    dialog.source_label.setText("before")
    dialog.target_label.setText("after")
    dialog.accept()
    wait_loaded(qtbot, window)
    assert window.view("Memory").compare_legend.names == ("before", "after")
    assert window.settings.recent_comparisons()[0] == (
        str(tutorial4_report.resolve()),
        str(tutorial4_variant_report.resolve()),
    )
    again = choose_and_compare(window)
    again.recent.setCurrentIndex(1)
    assert again.target.text() == str(tutorial4_variant_report.resolve())
    again.reject()


def test_dropping_a_second_report_asks_compare(
    qtbot, window, tutorial4_report, tutorial4_variant_report, monkeypatch
):
    window.open_paths([tutorial4_report])
    wait_loaded(qtbot, window)
    monkeypatch.setattr(compare_opening, "ask_on_drop", lambda w, p: "compare")
    assert compare_opening.dropped(window, [str(tutorial4_variant_report)])
    wait_loaded(qtbot, window)
    assert [o.name for o in window.opened] == ["tutorial4", "variant"]


def test_a_damaged_b_names_the_side_and_a_stays_usable(
    qtbot, window, tutorial4_report, damaged_liveness_report
):
    window.open_paths([tutorial4_report, damaged_liveness_report])
    wait_loaded(qtbot, window)
    view = window.view("Liveness")
    assert not view.showing_message()  # A is still drawn
    assert "Report B" in view.compare_legend.banner.text()
    assert "liveness" in view.compare_legend.banner.text()


def test_screenshots_of_every_view_compared(qtbot, compared, screenshot_dir):
    compared.resize(1400, 900)
    for theme in ("light", "dark"):
        compared.set_theme(theme)
        for view in compared.views:
            compared.show_view(view.title)
            compared.resize(1400, 900)
            qtbot.wait(50)
            name = view.title.lower().replace(" ", "_")
            path = screenshot_dir / f"compare_{name}_{theme}.png"
            assert compared.grab().save(str(path))
    assert compared.page_failures == []


def test_memory_and_liveness_curves_draw_a_b_and_the_difference(
    compared, tutorial4_report, tutorial4_variant_report
):
    a, b = open_report(tutorial4_report), open_report(tutorial4_variant_report)
    memory = compared.view("Memory").compare_tabs.curves["Compare: tiles"]
    per_tile = memory_table(b).total() - memory_table(a).total()  # numpy, per tile
    assert np.array_equal(memory.difference(), per_tile)
    drawn = [i for i in memory.bottom.listDataItems()]  # above zero (more), below (less)
    more = drawn[0].yData  # step mode: one value per tile
    assert np.array_equal(more, np.maximum(per_tile, 0))
    assert np.array_equal(drawn[1].yData, np.minimum(per_tile, 0))
    liveness = compared.view("Liveness").compare_tabs.curves["Compare: steps"]
    curves = [i for i in liveness.top.listDataItems() if isinstance(i, pg.PlotDataItem)]
    a_curve, b_curve = (item.yData for item in curves)
    assert a_curve.max() == liveness_table(a).peak_bytes
    assert b_curve.max() == liveness_table(b).peak_bytes
    assert f"peak A at {liveness_table(a).peak_step}" in liveness.peaks.text()


def test_execution_trace_stacks_both_runs_on_one_cycle_axis(qtbot, compared):
    view = compared.view("Execution Trace")
    traces = view.compare_tabs.pages["Compare: timelines"]
    assert [m.total_cycles for m in traces.models] == [
        22756 + 4 * SYNC_ADDED,
        39604 + 4 * SYNC_ADDED,
    ]
    assert "A: tutorial4" in traces.titles[0].text() and "B: variant" in traces.titles[1].text()
    traces.plots[1].set_x_range(1000.0, 5000.0)  # moving B moves A: one cycle axis
    x0, x1 = traces.plots[0].x_range
    assert abs(x0 - 1000.0) < 1 and abs(x1 - 5000.0) < 1
    compared.show_view("Execution Trace")
    view.details.setCurrentWidget(traces)
    traces.grab()  # paint: each trace asks its model for the spans in the window
    batch = traces.plots[0].spans.batch
    assert batch is not None and len(batch.start) > 0


def test_insights_compares_the_fit(compared, tutorial4_report, tutorial4_variant_report):
    rows = rows_of(compared.view("Insights").compare_tabs.panels["Compare: fit"])
    a, b = open_report(tutorial4_report), open_report(tutorial4_variant_report)
    fullest = [int(memory_table(r).total().max()) for r in (a, b)]  # numpy over the tiles
    assert rows["Fullest tile (bytes)"][:3] == [*fullest, fullest[1] - fullest[0]]
    assert rows["Tiles over the limit"][:3] == [0, 0, 0]
    peaks = [liveness_table(r).peak_bytes for r in (a, b)]
    assert rows["Peak live bytes"][:2] == peaks


def test_comparing_with_a_non_report_names_side_b_and_keeps_a_open(
    qtbot, window, tutorial4_report, tmp_path
):
    window.open_paths([tutorial4_report])
    wait_loaded(qtbot, window)
    empty = tmp_path / "not-a-report"
    empty.mkdir()
    window.open_paths([tutorial4_report, empty])
    wait_loaded(qtbot, window)
    assert window.message_box.text() == (
        f"{empty}: report B of the comparison: no profile.pop in this folder"
    )
    assert [o.name for o in window.opened] == ["tutorial4"]  # what was open stays usable
    assert window.view("Summary").value("Program", "Program") == "tutorial4"
    assert window.page_failures == []


def test_memory_compares_the_categories_of_the_selected_tiles(
    compared, tutorial4_report, tutorial4_variant_report
):
    view = compared.view("Memory")
    assert "Compare: selected tiles" not in view.compare_tabs.panels
    view.select_text("0-9")  # typed in the tile box, as a user would
    rows = rows_of(view.compare_tabs.panels["Compare: selected tiles"])
    a = memory_table(open_report(tutorial4_report)).by_category[:, :10].sum(axis=1)
    b = memory_table(open_report(tutorial4_variant_report)).by_category[:, :10].sum(axis=1)
    for category in MemoryCategory:
        assert rows[category.label][:3] == [a[category], b[category], b[category] - a[category]]


def shown_text(label) -> str:
    """What a label shows, as a user reads it (rich text rendered)."""
    if label.textFormat() != Qt.TextFormat.RichText:
        return label.text()
    document = QTextDocument()
    document.setHtml(label.text())
    return document.toPlainText()


def test_the_a_b_legend_and_peaks_render_their_markup_and_show_names_as_written(compared):
    legend = compared.view("Memory").compare_legend
    assert shown_text(legend.a_label) == "■ A: tutorial4"
    assert shown_text(legend.b_label) == "■ B: variant"
    peaks = compared.view("Liveness").compare_tabs.curves["Compare: steps"].peaks
    assert shown_text(peaks).startswith("▼ peak A at ") and "<span" not in shown_text(peaks)
    # a report name with markup is shown as written, not rendered
    assert shown_text(rich_label(side_html("A", "<b>x</b>", A_COLOR))) == "■ A: <b>x</b>"


def test_liveness_sides_share_one_y_axis(
    qtbot, compared, tutorial4_report, tutorial4_variant_report
):
    view = compared.view("Liveness")
    peaks = [
        liveness_table(open_report(r)).peak_bytes
        for r in (tutorial4_report, tutorial4_variant_report)
    ]
    tops = [chart.view_box.viewRange()[1][1] for chart in view.charts]
    assert tops == [pytest.approx(max(peaks) * 1.08)] * 2  # B's peak sets both axes
    view.control_bar.include_always_live.click()  # both curves drop: the axis follows both
    live = [
        liveness_table(open_report(r)).live_bytes(False).max()
        for r in (tutorial4_report, tutorial4_variant_report)
    ]
    tops = [chart.view_box.viewRange()[1][1] for chart in view.charts]
    assert tops == [pytest.approx(max(live) * 1.08)] * 2


def test_operations_compare_names_the_group_without_a_debug_context(compared):
    view = compared.view("Operations")
    shown = view.table_model
    names = {shown.data(shown.index(r, 0)) for r in range(shown.rowCount())}
    assert "(none)" in names  # the operations table's own name for it
    rows = rows_of(view.compare_tabs.panels["Compare: cycles"])
    assert "(none)" in rows and "" not in rows
