"""The Operations Graph page in the window, driven as a user does: what it draws (node
colours where the nodes are, their labels, edge labels), a click selecting the node's
operation on the Operations page and an operation picked there outlined here, folding a
layer by double-click, and the message for a report without a serialized graph."""

from __future__ import annotations

import csv
import shutil

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from popvision_py.app.screenshots import save_operations_graph_screenshots
from popvision_py.viewmodels.graph_colors import NO_FIGURES, RAMP
from popvision_py.views.operations_graph.view import OperationsGraphView
from profiler_core.analysis.operations import operations_table
from profiler_core.formats.serialized_graph import GRAPH_FILE
from tests.popvision_py.conftest import open_with_file_menu


def graph_page(qtbot, window, folder, monkeypatch) -> OperationsGraphView:
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    window.show_view("Operations Graph")
    view = window.view("Operations Graph")
    assert isinstance(view, OperationsGraphView)
    QApplication.processEvents()
    return view


def widget_point(view: OperationsGraphView, x: float, y: float) -> QPoint:
    box = view.canvas.getPlotItem().getViewBox()
    return view.canvas.mapFromScene(box.mapViewToScene(QPointF(x, y)))


def node_corner(view: OperationsGraphView, shown: int, inset: int = 4) -> QPoint:
    """A pixel just inside a node's top-left corner (labels are centred, away from it)."""
    lay = view.model.layout
    corner = widget_point(view, lay.x[shown] - lay.width[shown] / 2, lay.y[shown] - lay.height / 2)
    return corner + QPoint(inset, inset)


def grab(view: OperationsGraphView) -> QImage:
    QApplication.processEvents()
    return view.canvas.grab().toImage()


def click_node_grouped(qtbot, window, view: OperationsGraphView, key: str, group_by: str):
    """The Operations page grouped ``group_by``, then a click on node ``key`` of the graph:
    the Operations page and the node's shown index."""
    operations = window.view("Operations")
    box = operations.control_bar.group_by
    box.setCurrentIndex(box.findData(group_by))
    window.show_view("Operations Graph")
    shown = int(view.model.shown.shown_of_node[view.model.graph.key.index(key)])
    qtbot.mouseClick(
        view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=node_corner(view, shown, 12)
    )
    return operations, shown


@pytest.fixture
def pipelined_page(qtbot, window, pipelined_folder, monkeypatch) -> OperationsGraphView:
    return graph_page(qtbot, window, pipelined_folder, monkeypatch)


def test_each_node_is_drawn_in_its_metrics_colour_with_its_label(pipelined_page):
    view = pipelined_page
    model = view.model
    image = grab(view)
    shade, _, _ = model.shades()
    rect = view.canvas.rect()
    seen = 0
    for k in range(len(model.shown)):
        point = node_corner(view, k, inset=2)  # the label starts 4 px in
        if not rect.adjusted(2, 2, -2, -2).contains(point):
            continue
        expected = RAMP[shade[k]] if shade[k] >= 0 else NO_FIGURES
        assert image.pixelColor(point).name() == QColor(expected).name(), model.title(k)
        seen += 1
    assert seen >= 10
    titles = view.canvas.item.drawn_titles
    assert "param linear0.weight" in titles and "matmul" in titles
    # Memory colours the weights too: the biggest weight is among the darkest shades
    view.control_bar.metric.setCurrentText("Memory")
    image = grab(view)
    weight = int(model.shown.shown_of_node[model.graph.node_name.index("linear2.weight")])
    assert model.shades()[0][weight] >= len(RAMP) - 2
    assert (
        image.pixelColor(node_corner(view, weight)).name()
        == QColor(RAMP[model.shades()[0][weight]]).name()
    )


def test_edge_labels_show_each_tensors_type_and_shape(pipelined_page):
    view = pipelined_page
    assert view.canvas.item.drawn_edge_texts == []
    view.control_bar.edge_labels.setChecked(True)
    box = view.canvas.getPlotItem().getViewBox()
    box.scaleBy((2, 2))
    grab(view)
    assert view.canvas.item.drawn_edge_texts == []  # too small to read: none drawn
    box.scaleBy((0.5, 0.5))
    grab(view)
    texts = view.canvas.item.drawn_edge_texts
    assert "float 8×64" not in texts  # the micro-batch is 2: x is 2×64
    assert "float 2×64" in texts and "float 64×256" in texts


def test_a_click_selects_the_nodes_operation_on_the_operations_page(qtbot, window, pipelined_page):
    view = pipelined_page
    operations, shown = click_node_grouped(qtbot, window, view, "linear0/matmul", "name")
    model = view.model
    selection = window.opened[0].selection
    assert selection.operation == "linear0/matmul" and selection.operation_steps.size
    assert view.node_details.value_of("Node") == "matmul matmul (#4)"
    row = operations.table.currentIndex().row()
    assert operations.model.label_at(row) == "linear0/matmul"
    # and back: a row picked on the Operations page is outlined on the graph
    operations.select_operation("linear2/add")
    window.show_view("Operations Graph")
    target = int(model.shown.shown_of_node[model.graph.key.index("linear2/add")])
    assert np.flatnonzero(model.marked()).tolist() == [target]
    image = grab(view)
    outline = node_corner(view, target, inset=-4)  # the outline runs just outside the box
    near = [
        image.pixelColor(outline + QPoint(dx, dy)).name()
        for dx in range(-3, 4)
        for dy in range(-3, 4)
    ]
    assert "#1565c0" in near


def test_double_clicking_a_node_folds_its_layer(qtbot, pipelined_page):
    view = pipelined_page
    model = view.model
    before = len(model.shown)
    shown = int(model.shown.shown_of_node[model.graph.key.index("linear0/matmul")])
    view.select_node(shown)
    qtbot.mouseDClick(
        view.canvas.viewport(), Qt.MouseButton.LeftButton, pos=node_corner(view, shown, 12)
    )
    qtbot.waitUntil(lambda: len(model.shown) < before, timeout=10_000)
    layer = model.graph.scopes.path.index("linear0")
    assert model.collapsed[layer]
    assert len(model.shown) == before - 7 + 2  # linear0's 4 ops are one node, its grad's 3
    assert view.layers.items[layer].checkState(0) == Qt.CheckState.Checked
    grab(view)
    assert "▸ linear0 (4 ops)" in view.canvas.item.drawn_titles


def test_a_report_without_a_serialized_graph_says_which_option_writes_it(
    qtbot, window, pipelined_folder, tmp_path, monkeypatch
):
    folder = tmp_path / "pipelined"
    shutil.copytree(pipelined_folder, folder)
    (folder / GRAPH_FILE).unlink()
    view = graph_page(qtbot, window, folder, monkeypatch)
    assert view.showing_message() and view.model is None
    assert "autoReport.outputSerializedGraph" in view.message.text()


def test_another_run_recounts_the_nodes_figures(qtbot, window, replicated_report, monkeypatch):
    view = graph_page(qtbot, window, replicated_report, monkeypatch)
    report = window.opened[0].report
    assert len(report.execution.runs) == 2
    graph = view.model.graph
    before = view.model.figures
    window.opened[0].selection.select_run(1)
    qtbot.waitUntil(lambda: view.model.figures is not before, timeout=20_000)
    by_layer = operations_table(report, "layer", run=1)
    rows = dict(zip(by_layer.labels, by_layer.total_cycles.tolist(), strict=True))
    scopes = graph.scopes
    for top in [s for s in range(len(scopes)) if scopes.parent[s] < 0]:
        inside = [k for k in range(len(graph)) if graph.scope[k] >= 0
                  and scopes.ancestors(int(graph.scope[k]))[-1] == top]  # fmt: skip
        assert int(view.model.figures.cycles[inside].sum()) == rows[scopes.path[top]]


def test_make_runs_screenshots_include_the_graph_of_a_framework_report(
    qtbot, pipelined_page, window, tmp_path
):
    saved = save_operations_graph_screenshots(window, tmp_path)
    assert [p.name for p in saved] == [
        "operations-graph-selected.png",
        "operations-graph-edge-labels.png",
        "operations-graph-folded.png",
    ]
    assert all(p.stat().st_size > 10_000 for p in saved)
    assert pipelined_page.model.collapsed.all()


def test_a_poplar_programs_report_has_no_graph_screenshots(opened_window, tmp_path):
    assert save_operations_graph_screenshots(opened_window, tmp_path) == []
    view = opened_window.view("Operations Graph")
    assert "written against the Poplar API" in view.message.text()


def test_the_graph_is_read_joined_and_laid_out_off_the_gui_thread(
    qtbot, window, pipelined_folder, monkeypatch
):
    open_with_file_menu(qtbot, window, pipelined_folder, monkeypatch)
    window.pages_in_worker = True
    window.show_view("Operations Graph")
    view = next(v for v in window.views if v.title == "Operations Graph")
    assert view.showing_computing() and view.model is None  # the page says so meanwhile
    qtbot.waitUntil(lambda: view.model is not None, timeout=20_000)
    assert not view.showing_message() and len(view.model.shown) == 47


def test_export_csv_lists_every_shown_node_with_its_figures(pipelined_page, tmp_path):
    view = pipelined_page
    path = tmp_path / "graph.csv"
    assert view.export_csv(path)
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows[0] == ["Node", "Layer", "Cycles", "Memory (bytes)", "FLOPs"]
    assert len(rows) == len(view.model.shown) + 1
    by_name = operations_table(window_report(view), "name")
    matmul = by_name.row("linear2/matmul")
    row = next(r for r in rows[1:] if r[:2] == ["matmul", "linear2"])
    assert int(row[2]) == int(by_name.total_cycles[matmul])
    assert int(row[3]) == int(by_name.variable_bytes[matmul])


def window_report(view: OperationsGraphView):
    return view.opened.report


def test_a_click_shows_the_row_holding_the_node_in_another_grouping(qtbot, window, pipelined_page):
    """Operations grouped by layer: a node's click selects its layer's row there, and the
    selection stays the node's operation (the graph keeps the node, not the layer)."""
    view = pipelined_page
    operations, shown = click_node_grouped(qtbot, window, view, "linear2/matmul", "layer")
    model = view.model
    selection = window.opened[0].selection
    assert selection.operation == "linear2/matmul" and selection.operation_group_by != "layer"
    row = operations.table.currentIndex().row()
    assert operations.model.label_at(row) == "linear2"
    summary = operations.operation.summary.model.table
    rows = dict(zip(summary.columns[0].values, summary.columns[1].values, strict=True))
    table = operations_table(window.opened[0].report, "layer")
    cycles = int(table.total_cycles[table.row("linear2")])
    assert rows["Total cycles"] == f"{cycles:,}"  # the layer's own figures
    assert np.flatnonzero(model.marked()).tolist() == [shown]
