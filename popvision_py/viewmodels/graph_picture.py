"""What the Operations graph draws besides the nodes, and what it says of one: the pipeline
stages or IPUs as bands across the graph, where each edge's label goes, a node's hover text
and details, and the layers (name scopes) listed for folding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.operations_graph import OperationsGraphModel
from profiler_core.analysis.graph_layout import LAYER_GAP


@dataclass(frozen=True)
class Band:
    """Layers ``top``..``bottom`` (scene y) where the nodes are on one stage or IPU."""

    label: str
    value: int
    top: float
    bottom: float


def band_values(model: OperationsGraphModel) -> np.ndarray:
    """Each shown node's stage or IPU (its first member's; -1 for none)."""
    graph, shown = model.graph, model.shown
    per_node = graph.stage if model.bands == "Pipeline stages" else graph.shard
    first = np.full(len(shown), -1, dtype=np.int64)
    order = np.argsort(shown.shown_of_node, kind="stable")
    starts = np.searchsorted(shown.shown_of_node[order], np.arange(len(shown)))
    has = starts < len(order)
    first[has] = per_node[order[starts[has]]]
    return first


def bands(model: OperationsGraphModel) -> list[Band]:
    """A band per run of consecutive layers whose nodes are on one stage (or IPU); none when
    the graph is on one (or bands are off). Weights and inputs neither make nor cut one."""
    if model.bands not in ("Pipeline stages", "IPUs"):
        return []
    values = band_values(model)
    layer = model.layout.layer
    data = model.shown.trace_node >= 0
    data[data] = model.graph.source[model.shown.trace_node[data]]
    values = np.where(data, -1, values)  # weights and inputs sit beside their consumers
    real = values >= 0
    if len(np.unique(values[real])) < 2:
        return []
    word = "Stage" if model.bands == "Pipeline stages" else "IPU"
    out = []
    for value in np.unique(values[real]).tolist():
        layers = np.unique(layer[values == value])
        cuts = np.flatnonzero(np.diff(layers) > 1) + 1
        for run in np.split(layers, cuts):
            top = (run[0] - 0.5) * LAYER_GAP
            bottom = (run[-1] + 0.5) * LAYER_GAP
            out.append(Band(f"{word} {value}", value, top, bottom))
    return out


def edge_label_points(model: OperationsGraphModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, edge) where each edge's label goes: a third of the way down its first segment."""
    lay = model.layout
    first = np.flatnonzero(lay.seg_first)
    x = lay.seg_x0[first] + (lay.seg_x1[first] - lay.seg_x0[first]) / 3
    y = lay.seg_y0[first] + (lay.seg_y1[first] - lay.seg_y0[first]) / 3
    return x, y, lay.seg_edge[first]


def _figure_lines(model: OperationsGraphModel, shown: int) -> list[tuple[str, str]]:
    if model.figures is None:
        return [("Figures", model.figures_problem)]
    if not model.has_figures[shown]:
        return [("Figures", "none: the report has no operation of this node")]
    return [
        ("Cycles", f"{int(model.values('Cycles')[shown]):,}"),
        ("Memory", format_bytes(int(model.values("Memory")[shown]))),
        ("FLOPs", f"{int(model.values('FLOPs')[shown]):,}"),
    ]


def node_details(model: OperationsGraphModel, shown: int) -> list[tuple[str, str]]:
    """A node's rows for the details tab: what it is, where it was traced, its figures and
    the operation a click selects."""
    graph = model.graph
    node = int(model.shown.trace_node[shown])
    label, steps, group_by = model.operation_of(shown)
    if node >= 0:
        rows = [
            ("Node", f"{graph.op[node]} {graph.node_name[node]} (#{node})"),
            ("Output", graph.shape_text(node)),
            (
                "Inputs",
                ", ".join(graph.key[int(i)] for i in graph.edge_src[graph.edge_dst == node])
                or "none",
            ),
            (
                "Layer",
                graph.scopes.path[int(graph.scope[node])] if graph.scope[node] >= 0 else "none",
            ),
            ("IPU", str(int(graph.shard[node]))),
            ("Pipeline stage", str(int(graph.stage[node])) if graph.stage[node] >= 0 else "none"),
            ("Traced at", f"{graph.file[node]}:{int(graph.line[node])}"),
        ]
    else:
        scope = int(model.shown.scope[shown])
        op = graph.scopes.op[scope]
        rows = [
            ("Layer", graph.scopes.path[scope] + (f" ({op})" if op else "")),
            ("Ops inside", f"{model.shown.members(shown).size:,} (double-click to open it)"),
        ]
    rows += _figure_lines(model, shown)
    rows.append(
        ("Operation", f"{label} (by {group_by}, {steps.size:,} program steps)" if label else "none")
    )
    return rows


def node_tooltip(model: OperationsGraphModel, shown: int) -> str:
    return "\n".join(f"{name}: {value}" for name, value in node_details(model, shown))


def layer_rows(model: OperationsGraphModel) -> list[tuple[int, int, str, int]]:
    """Every layer: (scope, parent scope, its name and op, traced nodes under it)."""
    graph = model.graph
    scopes = graph.scopes
    counts = np.zeros(len(scopes), dtype=np.int64)
    for node_scope in graph.scope[graph.scope >= 0].tolist():
        for s in scopes.ancestors(node_scope):
            counts[s] += 1
    rows = []
    for s in range(len(scopes)):
        op = scopes.op[s]
        name = f"{scopes.name[s]} ({op})" if op else scopes.name[s]
        rows.append((s, int(scopes.parent[s]), name, int(counts[s])))
    return rows
