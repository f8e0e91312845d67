"""A trace's call tree: time aggregated by label path (``epoch > step > copy``) over all
threads, for the whole trace or a window of it, with total, self time and count per path.

Every step is numpy over the event columns: each span's parent is found with one binary
search per (thread, depth), then path ids are interned one depth at a time, and totals are
``bincount`` sums. In a window, each span counts the part of it inside the window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.trace.model import Trace


@dataclass(frozen=True)
class CallTree:
    """Nodes in depth order (parents before children); times in ns."""

    parent: np.ndarray  # int64 node index, -1 for a root
    label: np.ndarray  # int32 index into Trace.labels
    depth: np.ndarray  # int32
    total: np.ndarray  # int64 ns spent in spans of this path
    self_ns: np.ndarray  # int64 ns of ``total`` not in a nested span
    count: np.ndarray  # int64 spans of this path

    def __len__(self) -> int:
        return len(self.parent)

    def path(self, node: int, labels: tuple[str, ...]) -> list[str]:
        names = []
        while node >= 0:
            names.append(labels[int(self.label[node])])
            node = int(self.parent[node])
        return names[::-1]

    def find(self, path: list[str], labels: tuple[str, ...]) -> int:
        """The node of the label path ``path``, -1 when there is none."""
        parent = -1
        for name in path:
            hit = np.flatnonzero(
                (self.parent == parent) & (np.asarray(labels, dtype=object)[self.label] == name)
            )
            if hit.size == 0:
                return -1
            parent = int(hit[0])
        return parent


def event_parents(trace: Trace) -> np.ndarray:
    """Per event, the index of the span it is nested in (-1 for depth 0 and instants at 0).

    The parent of an event at depth d is the latest span of its thread at depth d - 1 that
    starts no later than it does (events are sorted by thread, start, depth).
    """
    parent = np.full(len(trace), -1, np.int64)
    is_span = trace.kind != EventKind.INSTANT
    for t in range(len(trace.threads)):
        part = trace.thread_slice(t)
        depth = trace.depth[part]
        starts = trace.start_ns[part]
        spans = is_span[part]
        if len(depth) == 0:
            continue
        for d in range(1, int(depth.max()) + 1):
            above = np.flatnonzero((depth == d - 1) & spans)
            here = np.flatnonzero(depth == d)
            if above.size == 0 or here.size == 0:
                continue
            pos = np.searchsorted(starts[above], starts[here], side="right") - 1
            ok = pos >= 0
            parent[part.start + here[ok]] = part.start + above[pos[ok]]
    return parent


def call_tree(
    trace: Trace,
    t0: float | None = None,
    t1: float | None = None,
    parents: np.ndarray | None = None,
) -> CallTree:
    """The call tree of ``trace``'s spans, of the part of each in [t0, t1) when given."""
    parents = event_parents(trace) if parents is None else parents
    start, end = trace.start_ns, trace.end_ns
    keep = trace.kind != EventKind.INSTANT
    if t0 is not None and t1 is not None:
        keep &= (start < t1) & (end > t0)
        inside = np.clip(end, t0, t1) - np.clip(start, t0, t1)
    else:
        inside = end - start
    events = np.flatnonzero(keep)
    node_of = np.full(len(trace), -1, np.int64)
    parent_nodes, labels, depths = [], [], []
    n_nodes = 0
    depth = trace.depth[events]
    for d in range(int(depth.max()) + 1 if events.size else 0):
        level = events[depth == d]
        if level.size == 0:
            continue
        up = parents[level]
        up_node = np.where(up >= 0, node_of[np.maximum(up, 0)], -1)
        # An orphan (parent outside the kept spans) starts its own root path.
        pair = (up_node + 1) * (len(trace.labels) + 1) + trace.label[level]
        unique, inverse = np.unique(pair, return_inverse=True)
        node_of[level] = n_nodes + inverse.reshape(-1)
        parent_nodes.append(unique // (len(trace.labels) + 1) - 1)
        labels.append(unique % (len(trace.labels) + 1))
        depths.append(np.full(len(unique), d))
        n_nodes += len(unique)
    nodes = node_of[events]
    weight = inside[events].astype(np.float64)
    total = np.bincount(nodes, weights=weight, minlength=n_nodes)
    up = parents[events]
    nested = up >= 0
    nested[nested] = node_of[up[nested]] >= 0
    child_time = np.bincount(
        node_of[up[nested]], weights=weight[nested], minlength=n_nodes
    ) if n_nodes else np.zeros(0)  # fmt: skip
    return CallTree(
        parent=_cat(parent_nodes, np.int64),
        label=_cat(labels, np.int32),
        depth=_cat(depths, np.int32),
        total=np.rint(total).astype(np.int64),
        self_ns=np.rint(total - child_time).astype(np.int64),
        count=np.bincount(nodes, minlength=n_nodes).astype(np.int64),
    )


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)
