"""The Operations graph as shown: the traced nodes, with each collapsed layer (name scope)
drawn as one node that holds its nodes, and the edges re-routed to it (those inside it
gone, two that meet the same pair drawn once).

A training model's backward pass stays apart: a layer's ``grad`` scope (the front-end's
name for the ops of its gradient) folds into a node of its own beside the layer's, so a
folded layer is still drawn where its forward pass runs and its gradient where the backward
pass reaches it (folded together, one node would be both, and pull the backward ops of
every later layer up beside it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler_core.analysis.framework_graph import FrameworkGraph


@dataclass(frozen=True)
class ShownGraph:
    """Shown nodes in trace order (each by its first member): a traced node or a collapsed
    layer."""

    trace_node: np.ndarray  # int64 per shown node: its traced node, -1 for a layer
    scope: np.ndarray  # int64 per shown node: the collapsed layer, -1 for a traced node
    shown_of_node: np.ndarray  # int64 per traced node: the shown node that holds it
    edge_src: np.ndarray  # int64 distinct edges between shown nodes, sorted (src, dst)
    edge_dst: np.ndarray
    edge_tensor: np.ndarray  # int64 per edge: a traced node whose output it carries
    order_key: np.ndarray  # int64 per shown node: its first member's trace id

    def __len__(self) -> int:
        return len(self.trace_node)

    def members(self, shown: int) -> np.ndarray:
        return np.flatnonzero(self.shown_of_node == shown)


BACKWARD_SCOPE = "grad"  # the front-end's scope of a layer's gradient ops


def collapsed_roots(graph: FrameworkGraph, collapsed: np.ndarray) -> np.ndarray:
    """For every scope, the outermost collapsed scope at or above it (-1 for none); a
    backward scope under a collapsed one is a root of its own (the module docstring)."""
    scopes = graph.scopes
    root = np.full(len(scopes), -1, dtype=np.int64)
    for s, parent in enumerate(scopes.parent.tolist()):  # parents come first
        up = root[parent] if parent >= 0 else -1
        if up >= 0 and scopes.name[s] == BACKWARD_SCOPE:
            root[s] = s  # folded with its layer, but as a node of its own
        else:
            root[s] = up if up >= 0 else (s if collapsed[s] else -1)
    return root


def shown_graph(graph: FrameworkGraph, collapsed: np.ndarray) -> ShownGraph:
    """The graph with the scopes marked in ``collapsed`` (bool per scope) folded."""
    n = len(graph)
    root = collapsed_roots(graph, np.asarray(collapsed, dtype=bool))
    node_root = np.where(graph.scope >= 0, root[np.maximum(graph.scope, 0)], -1)
    # one id per group: a traced node alone, or everything under one collapsed scope
    group = np.where(node_root >= 0, n + node_root, np.arange(n))
    groups, first, shown_of_node = np.unique(group, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # shown nodes in trace order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    shown_of_node = rank[shown_of_node.reshape(-1)]
    groups, first = groups[order], first[order]
    m = len(groups)
    src, dst = shown_of_node[graph.edge_src], shown_of_node[graph.edge_dst]
    keep = src != dst
    pairs, where = np.unique(src[keep] * max(m, 1) + dst[keep], return_index=True)
    return ShownGraph(
        trace_node=np.where(groups < n, groups, -1).astype(np.int64),
        scope=np.where(groups >= n, groups - n, -1).astype(np.int64),
        shown_of_node=shown_of_node.astype(np.int64),
        edge_src=(pairs // max(m, 1)).astype(np.int64),
        edge_dst=(pairs % max(m, 1)).astype(np.int64),
        edge_tensor=graph.edge_src[keep][where].astype(np.int64),
        order_key=first.astype(np.int64),
    )
