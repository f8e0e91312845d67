"""The Operations graph page's state without Qt: the framework's graph (an ONNX model or
the front-end's trace, ``profiler_core.analysis.framework_graph``) as shown -- layers
collapsed or open, laid out top to bottom (``graph_layout``) -- each node's figures from the
report's operations (``graph_operations``) and its shade for the metric picked, and the link
with the report's one selection: a click selects the node's operation (and so its program
steps); an operation selected on another page marks its nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from popvision_py.viewmodels.graph_colors import shade_of
from popvision_py.viewmodels.graph_shown import (
    BACKWARD_SCOPE,
    ShownGraph,
    collapsed_roots,
    shown_graph,
)
from popvision_py.viewmodels.operation_labels import operation_label
from popvision_py.viewmodels.selection import ReportSelection
from profiler_core.analysis.debug_groups import GROUPINGS, DebugGroups, debug_groups
from profiler_core.analysis.framework_graph import FrameworkGraph
from profiler_core.analysis.graph_layout import NODE_WIDTH, GraphLayout, layered_layout
from profiler_core.analysis.graph_operations import NodeFigures

METRICS = {"Cycles": "cycles", "Memory": "memory", "FLOPs": "flops"}
METRIC_HELP = {
    "Cycles": "Cycles of the steps the node's operation ran, as the Operations page counts "
    "them (grouped by operation name).",
    "Memory": "Bytes of the variables the node's operation created (a weight: its own).",
    "FLOPs": "Floating-point operations of the node's vertices, per execution.",
}
BAND_CHOICES = ("Pipeline stages", "IPUs", "No bands")
LAYER_WIDTH = NODE_WIDTH * 1.25  # a collapsed layer is drawn a little wider


@dataclass(frozen=True)
class Arrangement:
    """What a set of collapsed layers gives: the shown graph and its layout."""

    collapsed: np.ndarray  # bool per scope
    shown: ShownGraph
    layout: GraphLayout


def arrange(graph: FrameworkGraph, collapsed: np.ndarray) -> Arrangement:
    """Fold ``collapsed`` and lay the result out (the page runs this in a worker)."""
    shown = shown_graph(graph, collapsed)
    widths = np.where(shown.scope >= 0, LAYER_WIDTH, NODE_WIDTH)
    layout = layered_layout(len(shown), shown.edge_src, shown.edge_dst, shown.order_key, widths)
    return Arrangement(np.asarray(collapsed, dtype=bool).copy(), shown, layout)


def default_collapsed(graph: FrameworkGraph) -> np.ndarray:
    """An ONNX model opens as its ONNX graph: each ONNX node's traced ops folded into it;
    a front-end model opens with every traced op shown."""
    return np.array([bool(op) for op in graph.scopes.op], dtype=bool)


class OperationsGraphModel:
    """One report's Operations graph: ``figures`` None when the report's operations could
    not be read (``figures_problem`` says why; the graph is drawn without colours)."""

    def __init__(
        self,
        graph: FrameworkGraph,
        figures: NodeFigures | None,
        arrangement: Arrangement | None = None,
        figures_problem: str = "",
        debug: Any = None,
    ) -> None:
        self.graph = graph
        self.figures = figures
        self.debug = debug  # the report's debug contexts: what another page's grouping names
        self._groups: dict[str, DebugGroups] = {}
        self._marked: tuple[tuple, np.ndarray] | None = None
        self.figures_problem = figures_problem
        self.metric = "Cycles"
        self.bands = BAND_CHOICES[0]
        self.edge_labels = False
        self.current = -1  # the shown node clicked last
        self.selection: ReportSelection | None = None
        self.apply(arrangement or arrange(graph, default_collapsed(graph)))

    # -- arrangement ----------------------------------------------------------------------
    def apply(self, arrangement: Arrangement) -> None:
        current = self._current_members()
        self.collapsed = arrangement.collapsed
        self.shown = arrangement.shown
        self.layout = arrangement.layout
        if current.size and self.figures is not None:  # its busiest member stays picked
            current = current[np.argsort(-self.figures.cycles[current], kind="stable")]
        self.current = int(self.shown.shown_of_node[current[0]]) if current.size else -1
        self._values = {name: self._shown_values(field) for name, field in METRICS.items()}

    def set_figures(self, figures: NodeFigures | None, problem: str = "") -> None:
        """The nodes' figures afresh (another run counted)."""
        self.figures, self.figures_problem = figures, problem
        self._marked = None
        self._values = {name: self._shown_values(field) for name, field in METRICS.items()}

    def _current_members(self) -> np.ndarray:
        if self.current < 0 or not hasattr(self, "shown"):
            return np.zeros(0, dtype=np.int64)
        return self.shown.members(self.current)

    def set_collapsed(self, scope: int, collapsed: bool) -> None:
        """Fold or open the layer ``scope`` and lay the graph out again, here and now."""
        self.apply(arrange(self.graph, self.with_collapsed(scope, collapsed)))

    def with_collapsed(self, scope: int, collapsed: bool) -> np.ndarray:
        marks = self.collapsed.copy()
        marks[scope] = collapsed
        return marks

    def every_layer(self, collapsed: bool, framework_only: bool = False) -> np.ndarray:
        """Marks for every layer folded (``framework_only``: the ONNX nodes) or every one
        open."""
        if not collapsed:
            return np.zeros(len(self.graph.scopes), dtype=bool)
        if framework_only:
            return default_collapsed(self.graph)
        return np.ones(len(self.graph.scopes), dtype=bool)

    # -- figures and shades ---------------------------------------------------------------
    def _shown_values(self, field: str) -> np.ndarray:
        """A figure of every shown node: its own, or its members' and its layers' own."""
        m = len(self.shown)
        if self.figures is None:
            return np.zeros(m, dtype=np.int64)
        values = np.bincount(
            self.shown.shown_of_node, getattr(self.figures, field), minlength=m
        ).astype(np.int64)
        own = getattr(self.figures, f"scope_{field}")
        root = collapsed_roots(self.graph, self.collapsed)
        folded = np.flatnonzero(root >= 0)
        if folded.size:
            shown_of_scope = np.full(len(self.graph.scopes), -1, dtype=np.int64)
            layers = np.flatnonzero(self.shown.scope >= 0)
            shown_of_scope[self.shown.scope[layers]] = layers
            np.add.at(values, shown_of_scope[root[folded]], own[folded])
        return values

    @property
    def has_figures(self) -> np.ndarray:
        """bool per shown node: some operation of the report is one of its members'."""
        if self.figures is None:
            return np.zeros(len(self.shown), dtype=bool)
        counts = np.bincount(
            self.shown.shown_of_node, self.figures.has_figures, minlength=len(self.shown)
        )
        return counts > 0

    def values(self, metric: str | None = None) -> np.ndarray:
        """The figure of each shown node for ``metric`` (the one picked when None)."""
        return self._values[metric or self.metric]

    def shades(self) -> tuple[np.ndarray, float, float]:
        """Each shown node's shade for the metric, and the smallest and largest figure. A
        weight or input with none of the metric (no cycles, no FLOPs) is grey, not the
        lightest shade: it ran nothing."""
        values = self.values()
        data = self.shown.trace_node >= 0
        data[data] = self.graph.source[self.shown.trace_node[data]]
        return shade_of(values, self.has_figures & ~(data & (values == 0)))

    def missing_figures(self) -> tuple[int, int, int, int]:
        """Traced nodes without figures: (all, data -- weights, inputs, constants --,
        views, compute nodes)."""
        graph = self.graph
        none = (
            np.ones(len(graph), dtype=bool) if self.figures is None else ~self.figures.has_figures
        )
        data, view = none & graph.source, none & graph.view
        compute = none & graph.computes
        return int(none.sum()), int(data.sum()), int(view.sum()), int(compute.sum())

    def legend_text(self) -> str:
        _, lo, hi = self.shades()
        unit = {"Cycles": "cycles", "Memory": "bytes", "FLOPs": "FLOPs"}[self.metric]
        scale = f"{self.metric} (log scale): {lo:,.0f} to {hi:,.0f} {unit}" if hi else ""
        if self.figures is None:
            scale = f"No figures: {self.figures_problem}"
        every, data, view, compute = self.missing_figures()
        words = []
        if data:
            words.append(f"{data:,} weights, inputs or constants")
        if view:
            words.append(f"{view:,} views (reshape, transpose, slice)")
        if compute:
            words.append(f"{compute:,} ops the report has no operation of")
        missing = (
            f"{every:,} of {len(self.graph):,} traced nodes have no figures (grey): "
            + ", ".join(words)
            if every
            else f"every one of the {len(self.graph):,} traced nodes has figures"
        )
        if self.metric != "Memory" and self.figures is not None:
            missing += f"; weights and inputs have memory only (grey for {self.metric.lower()})"
        text = f"{scale} · {missing}." if scale else f"{missing}."
        return text + self._off_graph_text() if self.metric == "Cycles" else text

    def _off_graph_text(self) -> str:
        """How the nodes' cycles add up to the run's, with what ran outside the graph."""
        if self.figures is None:
            return ""
        figures = self.figures
        on = int(figures.cycles.sum() + figures.scope_cycles.sum())
        total = on + sum(figures.off_graph.values())
        if on == total:
            return f" The nodes hold all {total:,} cycles of the run."
        rest = ", ".join(
            f"{operation_label(label, 'layer')} {cycles:,}"
            for label, cycles in figures.off_graph.items()
        )
        return (
            f" The nodes hold {on:,} of the run's {total:,} cycles; the rest ran outside the "
            f"graph (Operations by layer): {rest}."
        )

    # -- names ----------------------------------------------------------------------------
    def title(self, shown: int, short: bool = False) -> str:
        """The text in a node's box (``short``: a folded layer without its op count, for a
        box too narrow for it)."""
        graph = self.graph
        node, scope = int(self.shown.trace_node[shown]), int(self.shown.scope[shown])
        if node >= 0:
            name, op = graph.node_name[node], graph.op[node]
            return op if name == op else f"{op} {name.rsplit('/', 1)[-1]}"
        op = graph.scopes.op[scope]
        name = graph.scopes.name[scope]
        kind = op.rsplit("::", 1)[-1]
        if op:  # an ONNX node: its name holds its op (Conv_n0) or is its own
            return name if name.startswith(kind) else f"{kind} {name}"
        if name == BACKWARD_SCOPE and graph.scopes.parent[scope] >= 0:
            name = graph.scopes.path[scope].rsplit("/", 2)[-2] + "/" + name  # linear2/grad
        if short:
            return f"▸ {name}"
        return f"▸ {name} ({self.shown.members(shown).size} ops)"

    def edge_text(self, edge: int) -> str:
        """An edge's label: the type and shape of the tensor it carries."""
        return self.graph.shape_text(int(self.shown.edge_tensor[edge]))

    def fold_toggle(self, shown: int) -> tuple[int, bool] | None:
        """What a double-click on ``shown`` does: a folded layer opens (the collapsed scope
        holding it: a backward node's is its layer's), a node in a layer folds its innermost
        layer; None for a node outside every layer."""
        scope = self.scope_of_shown(shown)
        if scope < 0:
            return None
        if self.shown.scope[shown] >= 0:
            chain = self.graph.scopes.ancestors(scope)
            held = [s for s in chain if self.collapsed[s]]
            return (held[-1], False) if held else None
        return scope, True

    def scope_of_shown(self, shown: int) -> int:
        """The layer a shown node is (a collapsed one) or sits in, -1 for none."""
        node = int(self.shown.trace_node[shown])
        return int(self.shown.scope[shown]) if node < 0 else int(self.graph.scope[node])

    # -- picking ----------------------------------------------------------------------------
    def node_at(self, x: float, y: float) -> int:
        """The shown node under the point (scene coordinates), -1 for none."""
        lay = self.layout
        inside = (np.abs(lay.x - x) <= lay.width / 2) & (np.abs(lay.y - y) <= lay.height / 2)
        hit = np.flatnonzero(inside)
        return int(hit[0]) if hit.size else -1

    def in_view(self, left: float, top: float, right: float, bottom: float) -> np.ndarray:
        """The shown nodes whose boxes meet the rectangle."""
        lay = self.layout
        half = lay.width / 2
        return np.flatnonzero(
            (lay.x + half >= left)
            & (lay.x - half <= right)
            & (lay.y + lay.height / 2 >= top)
            & (lay.y - lay.height / 2 <= bottom)
        )

    # -- the shared selection -------------------------------------------------------------
    def operation_of(self, shown: int) -> tuple[str, np.ndarray, str]:
        """The operation a click on ``shown`` selects: (label, program steps, grouping).
        A traced node: its operation by name; an ONNX node: itself by framework op; a
        top-level layer: by layer; ("", [], "name") for a node without one."""
        figures, graph = self.figures, self.graph
        empty = np.zeros(0, dtype=np.int64)
        if figures is None:
            return "", empty, "name"
        node, scope = int(self.shown.trace_node[shown]), int(self.shown.scope[shown])
        if node >= 0:
            label = figures.label[node]
            return label, (figures.steps(node) if label else empty), "name"
        members = self.shown.members(shown)
        root = collapsed_roots(graph, self.collapsed)
        inner = np.flatnonzero(root == scope)
        steps = np.unique(
            np.concatenate(
                [empty]
                + [figures.steps(int(k)) for k in members]
                + [figures.own_steps(int(s)) for s in inner]
            )
        )
        if graph.scopes.op[scope]:
            return figures.scope_label[scope] or graph.scopes.path[scope], steps, "framework"
        if graph.scopes.parent[scope] < 0:
            return graph.scopes.name[scope], steps, "layer"
        return graph.scopes.path[scope], steps, "name"

    def click(self, shown: int) -> None:
        """Select ``shown`` (-1: nothing) and write its operation into the selection."""
        self.current = shown
        if self.selection is None:
            return
        if shown < 0:
            self.selection.select_operation("", [])
            return
        label, steps, group_by = self.operation_of(shown)
        self.selection.select_operation(label, steps, group_by)

    def marked(self) -> np.ndarray:
        """bool per shown node: it belongs to the selection's operation -- its debug
        contexts are in the operation's group, in whatever grouping the page that selected
        it used (by phase: its program steps ran in the phase)."""
        m = len(self.shown)
        selection = self.selection
        if selection is None or not selection.operation or self.figures is None:
            return np.zeros(m, dtype=bool)
        label, group_by = selection.operation, selection.operation_group_by
        key = (label, group_by, id(selection.operation_steps), id(self.shown))
        if self._marked is None or self._marked[0] != key:  # every paint asks
            self._marked = (key, self._marked_now(label, group_by))
        return self._marked[1]

    def _marked_now(self, label: str, group_by: str) -> np.ndarray:
        m, selection, figures = len(self.shown), self.selection, self.figures
        assert selection is not None and figures is not None
        nodes = np.zeros(len(self.graph), dtype=bool)
        layers = np.zeros(len(self.graph.scopes), dtype=bool)
        if group_by in GROUPINGS and self.debug is not None:
            contexts = self._contexts_of(label, group_by)
            mine = figures.contexts.node[contexts]
            nodes[mine[mine >= 0]] = True
            own = figures.contexts.scope[contexts]
            layers[own[own >= 0]] = True
        else:
            steps = np.asarray(selection.operation_steps, dtype=np.int64)
            owner = np.repeat(np.arange(len(self.graph)), np.diff(figures.node_step_start))
            nodes[owner[np.isin(figures.node_steps, steps)]] = True
        mark = np.bincount(self.shown.shown_of_node[nodes], minlength=m) > 0
        for k in np.flatnonzero(self.shown.scope >= 0).tolist():
            scope = int(self.shown.scope[k])
            mark[k] |= bool(layers[scope]) or label == self.graph.scopes.path[scope]
        return mark

    def _contexts_of(self, label: str, group_by: str) -> np.ndarray:
        """The debug contexts of the operation ``label`` grouped ``group_by``."""
        groups = self._groups.get(group_by)
        if groups is None:
            groups = self._groups[group_by] = debug_groups(self.debug, group_by)
        try:
            group = groups.labels.index(label)
        except ValueError:
            return np.zeros(0, dtype=np.int64)
        count = len(self.figures.contexts.node) if self.figures is not None else 0
        everyone = np.arange(count, dtype=np.int64)
        return everyone[groups.group_of(everyone) == group]
