"""The Operations graph page: the framework's graph -- an ONNX model, or the front-end's
traced graph -- top to bottom, its nodes coloured by cycles, memory or FLOPs from the
report's operations, pipeline stages or IPUs as bands, edges labelled with type and shape
on demand, layers (name scopes) folded into one node or opened, and the one selection of
the report shared with Operations, Program Tree and Execution Trace: a click selects the
node's operation (and so its program steps); an operation selected elsewhere marks its
nodes.

The layout is our own layered (Sugiyama) layout in numpy (``profiler_core/analysis/
graph_layout.py``), not python-igraph's ``layout_sugiyama``: measured on ResNet-50's graph
(502 traced ops) it took 0.07-0.16 s against igraph's 0.24-0.44 s, and 0.40 s against
12.1 s on a synthetic 2,000-node trace (``benchmarks/bench_operations_graph.py``; the
target is 2 s); it places each weight beside the op that reads it and hands back the bend
points of long edges as arrays the chart draws as one path -- and it adds no dependency.
Qt's scene is used for drawing only, through one item that paints what is on screen
(``canvas.py``).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtWidgets import QWidget

from popvision_py.app.loader import BackgroundLoader
from popvision_py.theme import chart_colors
from popvision_py.viewmodels.graph_picture import node_tooltip
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.operations_graph import Arrangement, OperationsGraphModel, arrange
from popvision_py.viewmodels.operations_graph_open import figures_of, open_operations_graph
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.operations_graph.canvas import GraphCanvas
from popvision_py.views.operations_graph.controls import GraphControls, GraphLegend
from popvision_py.views.operations_graph.details import LayerTree, NodeDetails
from popvision_py.views.plain_text import show_hover_text
from popvision_py.views.selection_following import FollowsSelection


class OperationsGraphView(FollowsSelection, ChartDetailsView):
    title = "Operations Graph"
    rail_help = (
        "The model's graph as the framework traced it (an ONNX model, or the front-end's "
        "ops), top to bottom, coloured by cycles, memory or FLOPs; pipeline stages or IPUs "
        "as bands; layers folded or open. Click a node to select its operation on every "
        "page; an operation selected elsewhere is outlined here."
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: OperationsGraphModel | None = None
        self.control_bar = GraphControls()
        self.controls_layout.addWidget(self.control_bar)
        self.canvas = GraphCanvas()
        self.chart_layout.addWidget(self.canvas, 1)
        self.legend = GraphLegend()
        self.chart_layout.addWidget(self.legend)
        self.node_details = NodeDetails()
        self.layers = LayerTree()
        self.details.addTab(self.node_details, "Node")
        self.details.addTab(self.layers, "Layers")
        self.arranger = BackgroundLoader(self)  # a new layout after folding, off the GUI thread
        self.arranger.loaded.connect(self._on_arranged)
        self.refigure = BackgroundLoader(self)  # the figures of another run
        self.refigure.loaded.connect(self._on_figures)
        c = self.control_bar
        c.metric.currentTextChanged.connect(self._on_metric)
        c.bands.currentTextChanged.connect(self._on_bands)
        c.edge_labels.toggled.connect(self._on_edge_labels)
        c.fold_all.clicked.connect(lambda: self._fold_every(True))
        c.open_all.clicked.connect(lambda: self._fold_every(False))
        c.fit.clicked.connect(self.canvas.show_all)
        self.canvas.node_clicked.connect(self.select_node)
        self.canvas.node_double_clicked.connect(self._on_double_click)
        self.canvas.hovered.connect(self._on_hover)
        self.layers.fold_changed.connect(self.set_folded)
        self.clear()

    # -- building ---------------------------------------------------------------------------
    def compute(self, opened: OpenedReport, other: OpenedReport | None) -> object:
        return open_operations_graph(opened)

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self.unfollow_selection()
        ready = self.computed(opened, other)
        if isinstance(ready, str):
            return ready
        assert isinstance(ready, OperationsGraphModel)
        model = self.model = ready
        model.selection = opened.selection
        c = self.control_bar
        model.metric = c.metric.currentText()
        model.bands = c.bands.currentText()
        model.edge_labels = c.edge_labels.isChecked()
        note = (
            f"{model.graph.program} program {model.graph.name!r}: {len(model.graph):,} traced ops"
        )
        if other is not None:
            note += f". Comparing: this is A ({opened.name}); swap A and B to see B's graph."
        c.note.setText(note)
        self.apply_colors()
        self.canvas.set_model(model)
        self.layers.show_layers(model)
        self.node_details.show_none()
        self._update_legend()
        self.follow_selection(opened.selection)
        return ""

    def clear(self) -> None:
        self.model = None
        self.canvas.set_model(None)
        super().clear()

    def apply_colors(self) -> None:
        """The chart's background and ink for the window's palette."""
        self.canvas.set_dark(self._dark(), chart_colors(self).background)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_colors()

    def _dark(self) -> bool:
        return self.palette().window().color().lightness() < 128

    def _update_legend(self) -> None:
        if self.model is not None:
            self.legend.text.setText(self.model.legend_text())

    # -- controls ---------------------------------------------------------------------------
    def _on_metric(self, metric: str) -> None:
        if self.model is not None:
            self.model.metric = metric
            self._update_legend()
            self.canvas.item.update()

    def _on_bands(self, choice: str) -> None:
        if self.model is not None:
            self.model.bands = choice
            self.canvas.item.update()

    def _on_edge_labels(self, on: bool) -> None:
        if self.model is not None:
            self.model.edge_labels = on
            self.canvas.item.update()

    # -- folding layers ---------------------------------------------------------------------
    def set_folded(self, scope: int, folded: bool) -> None:
        """Fold (or open) the layer ``scope``; the new layout is made in a worker."""
        if self.model is not None:
            self._arrange(self.model.with_collapsed(scope, folded))

    def _fold_every(self, folded: bool) -> None:
        if self.model is not None:
            framework = folded and any(self.model.graph.scopes.op)
            self._arrange(self.model.every_layer(folded, framework_only=framework))

    def _arrange(self, marks: np.ndarray) -> None:
        graph = self.model.graph  # type: ignore[union-attr]
        self.arranger.start(lambda progress, stopped: arrange(graph, marks), "layout")

    def _on_arranged(self, arrangement: object) -> None:
        model = self.model
        if model is None or not isinstance(arrangement, Arrangement):
            return
        if len(arrangement.collapsed) != len(model.graph.scopes):
            return  # made for a graph no longer shown
        model.apply(arrangement)
        self.canvas.item.refresh()
        self.layers.show_folded(model)
        self._update_legend()
        if model.current >= 0:
            self.node_details.show_node(model, model.current)
            self.canvas.center_on(model.current)

    def _on_figures(self, ready: object) -> None:
        model = self.model
        if model is None or not isinstance(ready, tuple):
            return
        figures, problem = ready
        if figures is not None and len(figures.cycles) != len(model.graph):
            return  # made for a graph no longer shown
        model.set_figures(figures, problem)
        self._update_legend()
        if model.current >= 0:
            self.node_details.show_node(model, model.current)
        self.canvas.item.update()

    def _on_double_click(self, shown: int) -> None:
        """A folded layer opens; a node of a layer folds it (its innermost layer)."""
        model = self.model
        if model is None:
            return
        toggle = model.fold_toggle(shown)
        if toggle is not None:
            self.set_folded(*toggle)

    # -- the shared selection ---------------------------------------------------------------
    def select_node(self, shown: int) -> None:
        """Select the shown node ``shown`` (-1: none), as a click does."""
        model = self.model
        if model is None:
            return
        model.click(shown)
        if shown >= 0:
            self.node_details.show_node(model, shown)
            self.details.setCurrentWidget(self.node_details)
        else:
            self.node_details.show_none()
        self.canvas.item.update()

    def _on_selection_changed(self, what: str) -> None:
        model, opened = self.model, self.opened
        if model is not None and opened is not None and what == "run":
            graph = model.graph
            self.refigure.start(lambda progress, stopped: figures_of(opened, graph), "figures")
        if model is None or what != "operation":
            return
        marked = np.flatnonzero(model.marked())
        if marked.size and (model.current < 0 or model.current not in marked):
            self.canvas.center_on(int(marked[0]))
        self.canvas.item.update()

    def _on_hover(self, shown: int, scene_pos: QPointF) -> None:
        if self.model is not None and shown >= 0:
            show_hover_text(self.canvas, scene_pos, node_tooltip(self.model, shown))

    # -- exports and help -------------------------------------------------------------------
    def csv_rows(self) -> list[list[object]] | None:
        """Every shown node with its figures."""
        model = self.model
        if model is None:
            return None
        rows: list[list[object]] = [["Node", "Layer", "Cycles", "Memory (bytes)", "FLOPs"]]
        for k in range(len(model.shown)):
            scope = model.scope_of_shown(k)
            layer = model.graph.scopes.path[scope] if scope >= 0 else ""
            figures = [int(model.values(m)[k]) for m in ("Cycles", "Memory", "FLOPs")]
            rows.append([model.title(k), layer, *figures])
        return rows

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nColour by picks the metric (log scale, light to dark; grey: "
            "no figures). Bands shades the layers of each pipeline stage or IPU. Edge labels "
            "shows each edge's type and shape when zoomed in. Double-click a node to fold its "
            "layer, or a folded layer to open it; the Layers tab lists them all. Pan with the "
            "mouse, zoom with the wheel; Fit shows the whole graph. Needs a report written "
            "with autoReport.outputSerializedGraph (or autoReport.all)."
        )
