"""The program tree as arrays a tree view can show directly: parent, depth, first child, next
sibling and CSR children, each node's own program steps, and cycles and executions in runs.

A node's cycles are the durations of every executed instance of the steps in its subtree
(a step lasts as long as its slowest IPU). Its executions are how often it was entered:
the executions of its first own step (for a Repeat, If or Call, the control step), or,
for a node without steps of its own (a Sequence, a Function), of its first child; a
Repeat that only has its body's steps divides its first child's count by its repeat count.
Functions are roots of their own: a Call node's cycles are its Call step's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_programs, fail, selected_runs
from profiler_core.model.kinds import ProgramKind


@dataclass(frozen=True)
class ProgramTree:
    """Program tree nodes (depth-first order) with their steps, cycles and executions."""

    kind: np.ndarray  # uint8 kinds.ProgramKind
    name: np.ndarray  # int32 string index
    parent: np.ndarray  # int32, -1 for roots
    depth: np.ndarray  # int32, 0 for roots
    first_child: np.ndarray  # int32, -1 for leaves
    next_sibling: np.ndarray  # int32, -1 for the last child
    child_offsets: np.ndarray  # int64 (P + 1): node n's children are children[o[n]:o[n+1]]
    children: np.ndarray  # int32
    step_offsets: np.ndarray  # int64 (P + 1): node n's own steps are steps[o[n]:o[n+1]]
    steps: np.ndarray  # int32 program steps, in program order within a node
    cycles: np.ndarray  # int64 cycles of the node's subtree in the runs counted
    self_cycles: np.ndarray  # int64 cycles of the node's own steps
    executions: np.ndarray  # int64 times the node was entered in the runs counted
    roots: np.ndarray  # int32 root node of each engine program
    step_executions: np.ndarray  # int64 (S,) executions of each step in the runs counted
    step_cycles: np.ndarray  # int64 (S,) cycles of each step over those executions

    def __len__(self) -> int:
        return len(self.kind)

    def children_of(self, node: int) -> np.ndarray:
        return self.children[self.child_offsets[node] : self.child_offsets[node + 1]]

    def steps_of(self, node: int) -> np.ndarray:
        return self.steps[self.step_offsets[node] : self.step_offsets[node + 1]]


def program_tree(report: Any, run: int | None = None) -> ProgramTree:
    """The tree with cycles and executions of run ``run``, or of every run when None."""
    programs = checked_programs(report)
    runs = selected_runs(report, run)
    num_steps, num_nodes = programs.num_steps, len(programs.node_kind)
    step_executions = np.zeros(num_steps, dtype=np.int64)
    for r in runs:
        step_executions += np.bincount(r.step_ids, minlength=num_steps)
    duration = programs.step_cycles.max(axis=1) if num_steps else np.zeros(0, np.int64)
    step_cycles = step_executions * duration
    parent = programs.node_parent.astype(np.int32)
    depth = _depths(parent)
    child_offsets, children = _csr(parent, num_nodes)
    first_child, next_sibling = _first_child_next_sibling(child_offsets, children, num_nodes)
    step_node = programs.step_node
    owned = step_node >= 0
    step_offsets, steps = _csr(np.where(owned, step_node, -1), num_nodes)
    self_cycles = np.zeros(num_nodes, dtype=np.int64)
    np.add.at(self_cycles, step_node[owned], step_cycles[owned])
    try:
        cycles = _subtree_sums(self_cycles, parent)
    except OverflowError as error:
        fail(report, "programs", str(error))
    executions = _executions(programs, step_offsets, steps, step_executions, first_child)
    return ProgramTree(
        kind=programs.node_kind,
        name=programs.node_name,
        parent=parent,
        depth=depth,
        first_child=first_child,
        next_sibling=next_sibling,
        child_offsets=child_offsets,
        children=children,
        step_offsets=step_offsets,
        steps=steps,
        cycles=cycles,
        self_cycles=self_cycles,
        executions=executions,
        roots=programs.roots,
        step_executions=step_executions,
        step_cycles=step_cycles,
    )


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of each node. Parents precede children, so one pass in order settles it; a
    plain loop stays linear however deep the tree (a level-by-level numpy pass would not)."""
    depth = [0] * len(parent)
    for node, up in enumerate(parent.tolist()):
        if up >= 0:
            depth[node] = depth[up] + 1
    return np.array(depth, dtype=np.int32)


def _csr(owner: np.ndarray, num_owners: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by owner (-1 = none), in row order within an owner, with offsets."""
    rows = np.flatnonzero(owner >= 0)
    keys = owner[rows]
    order = np.argsort(keys, kind="stable")
    counts = np.bincount(keys, minlength=num_owners)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return offsets, rows[order].astype(np.int32)


def _first_child_next_sibling(
    offsets: np.ndarray, children: np.ndarray, num_nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    first_child = np.full(num_nodes, -1, dtype=np.int32)
    has_children = offsets[1:] > offsets[:-1]
    first_child[has_children] = children[offsets[:-1][has_children]]
    next_sibling = np.full(num_nodes, -1, dtype=np.int32)
    if children.size:
        is_last = np.zeros(children.size, dtype=bool)
        is_last[offsets[1:][has_children] - 1] = True
        following = np.append(children[1:], -1)
        next_sibling[children] = np.where(is_last, -1, following)
    return first_child, next_sibling


def _subtree_sums(values: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Each node's value plus its descendants': children follow parents, so add backwards."""
    total = values.tolist()
    ups = parent.tolist()
    for node in range(len(total) - 1, -1, -1):
        if ups[node] >= 0:
            total[ups[node]] += total[node]
    if total and max(total) >= 2**63:
        raise OverflowError("cycles of a program subtree do not fit in 64 bits")
    return np.array(total, dtype=np.int64)


def _executions(
    programs: Any,
    step_offsets: np.ndarray,
    steps: np.ndarray,
    step_executions: np.ndarray,
    first_child: np.ndarray,
) -> np.ndarray:
    num_nodes = len(first_child)
    has_steps = step_offsets[1:] > step_offsets[:-1]
    own = np.zeros(num_nodes, dtype=np.int64)
    own[has_steps] = step_executions[steps[step_offsets[:-1][has_steps]]]
    # A node without steps of its own was entered as often as its first child (which follows
    # it); a Repeat whose only steps are its body's, once per ``count`` bodies.
    executions = own.tolist()
    child = first_child.tolist()
    divisor = np.where(
        (programs.node_kind == ProgramKind.REPEAT) & (programs.node_count > 0),
        programs.node_count,
        1,
    ).tolist()
    for node in np.flatnonzero(~has_steps & (first_child >= 0))[::-1].tolist():
        executions[node] = executions[child[node]] // divisor[node]
    return np.array(executions, dtype=np.int64)


def subtree_ends(parent: np.ndarray) -> np.ndarray:
    """For nodes in depth-first order (parents first), node n's subtree is [n, end[n])."""
    ups = np.asarray(parent).tolist()
    end = list(range(1, len(ups) + 1))
    for node in range(len(ups) - 1, -1, -1):
        up = ups[node]
        if up >= 0 and end[node] > end[up]:
            end[up] = end[node]
    return np.array(end, dtype=np.int64)
