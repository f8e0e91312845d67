"""The framework graph's nodes joined to the report's operations: which debug contexts each
traced node made, so its cycles, memory and FLOPs are the Operations page's figures.

How the names meet (``graph_node_contexts``): the engine builds each traced node inside its
name scopes, so the library op call it makes is named ``<scopes>/<node name>`` -- the node's
``key`` (``linear0/matmul``, ``ONNX/Conv_n0/conv``) and the Operations row of the call when
grouped by operation name. The join walks the op calls in creation order (the order the
nodes were built):

1. an ONNX node's own context (named as its scope, ``ONNX/Conv_n0``, op ``onnx::Conv``)
   belongs to that scope, not to a node;
2. a call inside another call belongs to the outer call's node (``relu1/relu/relu``);
3. a call named exactly a node's key is that node's; two nodes of one key (two ``matmul``
   in ``linear6/grad``) take its calls in turn, as they were built;
4. a call under a key (``<key>/...``) is the last node of that key built;
5. a call named otherwise (a library op that names its call itself: ``crossEntropy`` for
   ``softmax_xent``) is the node built between the calls around it that has no call yet and
   whose scopes hold it.

Every other context (variables, compute sets, vertices, steps) follows its nearest op call.
A weight or input has no op call: its variable is found by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.debug_groups import (
    debug_column,
    groups_of,
    op_call_mask,
    operation_contexts,
)
from profiler_core.analysis.framework_graph import FrameworkGraph
from profiler_core.analysis.operation_index import operation_index


@dataclass(frozen=True)
class NodeContexts:
    """Per debug context: the traced node that made it, or the framework scope (an ONNX
    node) whose own context it is; -1 for neither."""

    node: np.ndarray  # int64 per context
    scope: np.ndarray  # int64 per context
    call_name: list[str]  # per context: its nearest op call's name ("" for none)


@dataclass(frozen=True)
class NodeFigures:
    """Figures of each node and of each scope's own context, from the report's operations."""

    cycles: np.ndarray  # int64 per node, over the runs counted
    memory: np.ndarray  # int64 bytes of the variables it created (a weight: its own)
    flops: np.ndarray  # int64 per execution of its compute sets
    has_figures: np.ndarray  # bool: some debug context of the report is the node's
    label: list[str]  # per node: its operation when grouped by name ("" for none)
    scope_cycles: np.ndarray  # int64 per scope: its own context's (an ONNX node's)
    scope_memory: np.ndarray
    scope_flops: np.ndarray
    scope_label: list[str]  # the framework op's name (Operations by framework op), or ""
    node_step_start: np.ndarray  # int64 (nodes + 1,): CSR offsets into node_steps
    node_steps: np.ndarray  # int64 program steps, sorted within each node
    scope_step_start: np.ndarray  # int64 (scopes + 1,)
    scope_steps: np.ndarray
    contexts: NodeContexts  # which node (or scope) each debug context is
    #: the cycles no node or scope ran, by layer as Operations groups them ("" is (none)),
    #: largest first: what the run spent outside the model's graph (host transfers, the
    #: pipeline's phases, the optimizer), so the nodes and these add up to the run
    off_graph: dict[str, int]

    def steps(self, node: int) -> np.ndarray:
        return self.node_steps[self.node_step_start[node] : self.node_step_start[node + 1]]

    def own_steps(self, scope: int) -> np.ndarray:
        return self.scope_steps[self.scope_step_start[scope] : self.scope_step_start[scope + 1]]


def graph_node_contexts(graph: FrameworkGraph, debug: Any) -> NodeContexts:
    """Which node (or framework scope) each debug context belongs to (see the module)."""
    count = 0 if debug is None else len(debug.parent)
    node_of = np.full(count, -1, dtype=np.int64)
    scope_of = np.full(count, -1, dtype=np.int64)
    if not count:
        return NodeContexts(node_of, scope_of, [])
    is_call = op_call_mask(debug)
    parents = np.asarray(debug.parent, dtype=np.int64)
    owner = operation_contexts(debug)  # nearest op call at or above, else itself
    calls = np.flatnonzero(is_call)
    names = debug_column(debug, "name", calls)
    ops = debug_column(debug, "op", calls)
    _assign_calls(graph, calls, names, ops, parents, owner, is_call, node_of, scope_of)
    owned = is_call[owner]
    node_of = np.where(owned, node_of[owner], -1)
    scope_of = np.where(owned, scope_of[owner], -1)
    _assign_sources(graph, debug, owner, is_call, node_of)
    name_of_call = dict(zip(calls.tolist(), names, strict=True))
    call_name = [
        name_of_call.get(o, "") if c else "" for o, c in zip(owner.tolist(), owned, strict=True)
    ]
    return NodeContexts(node_of, scope_of, call_name)


def _assign_calls(
    graph: FrameworkGraph,
    calls: np.ndarray,
    names: list[str],
    ops: list[str],
    parents: np.ndarray,
    owner: np.ndarray,
    is_call: np.ndarray,
    node_of: np.ndarray,
    scope_of: np.ndarray,
) -> None:
    """Rules 1-4 in creation order, then rule 5 for the calls left (module docstring)."""
    computes = graph.computes
    by_key: dict[str, list[int]] = {}
    for node in np.flatnonzero(computes).tolist():
        by_key.setdefault(graph.key[node], []).append(node)
    scopes = graph.scopes
    framework = {p: s for s, (p, op) in enumerate(zip(scopes.path, scopes.op, strict=True)) if op}
    taken: dict[str, int] = {}
    last: dict[str, int] = {}
    left: list[int] = []
    for k, (call, name, op) in enumerate(zip(calls.tolist(), names, ops, strict=True)):
        scope = framework.get(name, -1)
        if scope >= 0 and scopes.op[scope] == op:
            scope_of[call] = scope
            continue
        above = _call_above(call, parents, owner, is_call)
        if above >= 0 and node_of[above] >= 0:
            node_of[call] = node_of[above]
        elif name in by_key:
            nodes = by_key[name]
            turn = taken.get(name, 0)
            node_of[call] = last[name] = nodes[min(turn, len(nodes) - 1)]
            taken[name] = turn + 1
        else:
            key = _key_above(name, by_key)
            if key:
                node_of[call] = last.get(key, by_key[key][0])
            else:
                left.append(k)
    _assign_left(graph, calls, names, left, parents, owner, is_call, node_of)


def _call_above(call: int, parents: np.ndarray, owner: np.ndarray, is_call: np.ndarray) -> int:
    parent = int(parents[call])
    if parent < 0 or parent >= call:
        return -1
    above = int(owner[parent])
    return above if is_call[above] else -1


def _key_above(name: str, by_key: dict[str, list[int]]) -> str:
    """The longest node key that ``name`` lies under (``<key>/...``), "" for none."""
    parts = name.split("/")
    for cut in range(len(parts) - 1, 0, -1):
        key = "/".join(parts[:cut])
        if key in by_key:
            return key
    return ""


def _assign_left(
    graph: FrameworkGraph,
    calls: np.ndarray,
    names: list[str],
    left: list[int],
    parents: np.ndarray,
    owner: np.ndarray,
    is_call: np.ndarray,
    node_of: np.ndarray,
) -> None:
    """Rule 5: a call named by its library is the node built between its neighbours' nodes
    that has no call yet and whose scopes hold it (the innermost such scopes first)."""
    if not left:
        return
    matched = node_of[calls] >= 0
    has_call = np.zeros(len(graph), dtype=bool)
    has_call[node_of[calls[matched]]] = True
    open_nodes = np.flatnonzero(graph.computes & ~has_call)
    matched_at = np.flatnonzero(matched)
    scope_path = [graph.scopes.path[s] if s >= 0 else "" for s in graph.scope.tolist()]
    for k in left:
        call = int(calls[k])
        above = _call_above(call, parents, owner, is_call)
        if above >= 0 and node_of[above] >= 0:
            node_of[call] = node_of[above]
            continue
        where = np.searchsorted(matched_at, k)
        before = int(node_of[calls[matched_at[where - 1]]]) if where > 0 else -1
        after = int(node_of[calls[matched_at[where]]]) if where < len(matched_at) else len(graph)
        between = open_nodes[(open_nodes > before) & (open_nodes < after)]
        best, depth = -1, -1
        for node in between.tolist():
            path = scope_path[node]
            holds = not path or names[k].startswith(path + "/")
            if holds and path.count("/") + bool(path) > depth:
                best, depth = node, path.count("/") + bool(path)
        node_of[call] = best


def _assign_sources(
    graph: FrameworkGraph, debug: Any, owner: np.ndarray, is_call: np.ndarray, node_of: np.ndarray
) -> None:
    """A weight's or an input's variable: a context outside every op call named as the node
    (without the node name's own prefix: ``gpu_0/conv1_w_0`` is ``conv1_w_0``)."""
    sources = np.flatnonzero(graph.source).tolist()
    wanted: dict[str, list[int]] = {}
    for node in sources:
        name = graph.node_name[node]
        for text in {name, name.rsplit("/", 1)[-1]}:
            wanted.setdefault(text, []).append(node)
    alone = np.flatnonzero(~is_call[owner] & (node_of < 0))
    for ctx, name in zip(alone.tolist(), debug_column(debug, "name", alone), strict=True):
        nodes = wanted.get(name)
        if nodes and len(nodes) == 1:
            node_of[ctx] = nodes[0]


def node_figures(
    report: Any, graph: FrameworkGraph, run: int | None = None, debug: Any = None
) -> NodeFigures:
    """Cycles (over run ``run``, or every run), memory and FLOPs of every node and of each
    framework scope's own context, through ``graph_node_contexts``."""
    index = operation_index(report, "name", run, debug)
    debug, pieces, report_graph = index.debug, index.pieces, index.graph
    joined = graph_node_contexts(graph, debug)
    count = len(joined.node)
    n, s = len(graph), len(graph.scopes)
    ctx_cycles = _by_context(pieces.context, pieces.cycles, count)
    ctx_memory = _by_context(report_graph.var_debug, report_graph.var_bytes, count)
    ctx_flops = _by_context(report_graph.vertex_contexts(), report_graph.vc_flops, count)
    node_start, node_steps = _steps_of(joined.node, pieces, n)
    scope_start, scope_steps = _steps_of(joined.scope, pieces, s)
    return NodeFigures(
        cycles=_sum_into(joined.node, ctx_cycles, n),
        memory=_sum_into(joined.node, ctx_memory, n),
        flops=_sum_into(joined.node, ctx_flops, n),
        has_figures=np.bincount(joined.node[joined.node >= 0], minlength=n) > 0,
        label=_labels(joined, ctx_cycles, n),
        scope_cycles=_sum_into(joined.scope, ctx_cycles, s),
        scope_memory=_sum_into(joined.scope, ctx_memory, s),
        scope_flops=_sum_into(joined.scope, ctx_flops, s),
        scope_label=_scope_labels(joined, graph),
        node_step_start=node_start,
        node_steps=node_steps,
        scope_step_start=scope_start,
        scope_steps=scope_steps,
        contexts=joined,
        off_graph=_off_graph(joined, pieces, debug),
    )


def _off_graph(joined: NodeContexts, pieces: Any, debug: Any) -> dict[str, int]:
    contexts = np.asarray(pieces.context, dtype=np.int64)
    known = (contexts >= 0) & (contexts < len(joined.node))
    on_graph = np.zeros(len(contexts), dtype=bool)
    ids = contexts[known]
    on_graph[known] = (joined.node[ids] >= 0) | (joined.scope[ids] >= 0)
    labels, group = groups_of(debug, "layer", contexts[~on_graph])
    sums = np.bincount(group, np.asarray(pieces.cycles)[~on_graph], minlength=len(labels))
    return {labels[i]: int(sums[i]) for i in np.argsort(-sums, kind="stable") if sums[i]}


def _by_context(contexts: np.ndarray, values: np.ndarray, count: int) -> np.ndarray:
    contexts = np.asarray(contexts, dtype=np.int64)
    known = (contexts >= 0) & (contexts < count)
    values = np.asarray(values, dtype=np.int64)
    return np.bincount(contexts[known], values[known], minlength=count).astype(np.int64)


def _sum_into(group: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    mine = group >= 0
    return np.bincount(group[mine], values[mine], minlength=size).astype(np.int64)


def _steps_of(group: np.ndarray, pieces: Any, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each group's program steps (those its contexts ran) as CSR arrays."""
    contexts = pieces.context
    known = (contexts >= 0) & (contexts < len(group))
    owner = np.full(len(contexts), -1, dtype=np.int64)
    owner[known] = group[contexts[known]]
    mine = owner >= 0
    width = int(pieces.step.max()) + 1 if len(pieces.step) else 1
    pairs = np.unique(owner[mine] * width + pieces.step[mine])
    start = np.searchsorted(pairs // width, np.arange(size + 1))
    return start.astype(np.int64), (pairs % width).astype(np.int64)


def _labels(joined: NodeContexts, ctx_cycles: np.ndarray, n: int) -> list[str]:
    """Each node's operation by name: of its calls', the one with the most cycles."""
    cycles_of_call: dict[tuple[int, str], int] = {}
    for ctx in np.flatnonzero(joined.node >= 0).tolist():
        name = joined.call_name[ctx]
        if name:
            key = (int(joined.node[ctx]), name)
            cycles_of_call[key] = cycles_of_call.get(key, 0) + int(ctx_cycles[ctx])
    best: dict[int, tuple[int, str]] = {}
    for (node, name), cycles in cycles_of_call.items():
        if node not in best or cycles > best[node][0]:
            best[node] = (cycles, name)
    return [best[k][1] if k in best else "" for k in range(n)]


def _scope_labels(joined: NodeContexts, graph: FrameworkGraph) -> list[str]:
    labels = [""] * len(graph.scopes)
    for ctx in np.flatnonzero(joined.scope >= 0).tolist():
        labels[int(joined.scope[ctx])] = graph.scopes.path[int(joined.scope[ctx])]
    return labels
