"""Synthetic program trees and operations tables, as big or as deep as a benchmark or a
view-model test needs, built straight from numpy arrays (no engine run)."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.operations import OperationsTable
from profiler_core.analysis.program_tree import ProgramTree
from profiler_core.model.kinds import ProgramKind, StepKind
from profiler_core.model.strings import Strings


def tree_from_parents(
    parent: np.ndarray,
    kind: np.ndarray,
    name: np.ndarray,
    step_node: np.ndarray,
    step_cycles: np.ndarray,
    roots: np.ndarray | None = None,
) -> ProgramTree:
    """A ProgramTree of nodes in depth-first order (``parent``) whose steps, in program
    order, belong to ``step_node``; every step executed once."""
    parent = np.asarray(parent, dtype=np.int32)
    num_nodes = parent.size
    step_node = np.asarray(step_node, dtype=np.int64)
    child_rows = np.flatnonzero(parent >= 0)
    children = child_rows[np.argsort(parent[child_rows], kind="stable")].astype(np.int32)
    counts = np.bincount(parent[child_rows], minlength=num_nodes)
    child_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    steps = np.argsort(step_node, kind="stable").astype(np.int32)
    step_counts = np.bincount(step_node, minlength=num_nodes)
    step_offsets = np.concatenate(([0], np.cumsum(step_counts))).astype(np.int64)
    depth = [0] * num_nodes
    ups = parent.tolist()
    for node, up in enumerate(ups):
        if up >= 0:
            depth[node] = depth[up] + 1
    step_cycles = np.asarray(step_cycles, dtype=np.int64)
    self_cycles = np.bincount(step_node, weights=step_cycles, minlength=num_nodes)
    total = self_cycles.astype(np.int64).tolist()
    for node in range(num_nodes - 1, -1, -1):
        if ups[node] >= 0:
            total[ups[node]] += total[node]
    first_child = np.full(num_nodes, -1, dtype=np.int32)
    has = counts > 0
    first_child[has] = children[child_offsets[:-1][has]]
    return ProgramTree(
        kind=np.asarray(kind, dtype=np.uint8),
        name=np.asarray(name, dtype=np.int32),
        parent=parent,
        depth=np.array(depth, dtype=np.int32),
        first_child=first_child,
        next_sibling=np.full(num_nodes, -1, dtype=np.int32),
        child_offsets=child_offsets,
        children=children,
        step_offsets=step_offsets,
        steps=steps,
        cycles=np.array(total, dtype=np.int64),
        self_cycles=self_cycles.astype(np.int64),
        executions=np.ones(num_nodes, dtype=np.int64),
        roots=np.array([0] if roots is None else roots, dtype=np.int32),
        step_executions=np.ones(step_node.size, dtype=np.int64),
        step_cycles=step_cycles,
    )


def wide_program(
    repeats: int, executes: int
) -> tuple[ProgramTree, np.ndarray, np.ndarray, Strings]:
    """Sequence "main" > ``repeats`` Repeat nodes (each with its Repeat step) > ``executes``
    Execute nodes each lowered to Sync, DoExchange, OnTileExecute. Returns the tree, each
    step's kind and name (string index) and the string table."""
    per_repeat = 1 + executes
    num_nodes = 1 + repeats * per_repeat
    node = np.arange(num_nodes)
    local = (node - 1) % per_repeat
    block = (node - 1) // per_repeat
    parent = np.where(local == 0, 0, 1 + block * per_repeat)
    parent[0] = -1
    kind = np.where(local == 0, ProgramKind.REPEAT, ProgramKind.EXECUTE)
    kind[0] = ProgramKind.SEQUENCE
    # strings: 0 "main", 1 "loop", 2 "Sync", 3 "DoExchange", then one name per Execute
    execute_nodes = np.flatnonzero(kind == ProgramKind.EXECUTE)
    names = ["main", "loop", "Sync", "DoExchange"]
    names += [f"layer{i % 97}/op{i}/Convolve" for i in range(execute_nodes.size)]
    name = np.ones(num_nodes, dtype=np.int64)
    name[0] = 0
    name[execute_nodes] = 4 + np.arange(execute_nodes.size)
    repeat_nodes = np.flatnonzero(kind == ProgramKind.REPEAT)
    # steps in program order: each Repeat's control step, then its Executes' three steps
    owners, kinds, step_names = [], [], []
    for r in repeat_nodes.tolist():
        body = np.arange(r + 1, r + per_repeat)
        owners.append(np.concatenate(([r], np.repeat(body, 3))))
        kinds.append(
            np.concatenate(
                (
                    [StepKind.REPEAT],
                    np.tile(
                        [StepKind.SYNC, StepKind.DO_EXCHANGE, StepKind.ON_TILE_EXECUTE], body.size
                    ),
                )
            )
        )
        body_names = np.stack((np.full(body.size, 2), np.full(body.size, 3), name[body]), axis=1)
        step_names.append(np.concatenate(([1], body_names.reshape(-1))))
    step_node = np.concatenate(owners)
    step_kind = np.concatenate(kinds).astype(np.uint8)
    step_name = np.concatenate(step_names).astype(np.int64)
    cycles = 10 + (np.arange(step_node.size) * 7919) % 1000
    tree = tree_from_parents(parent, kind, name, step_node, cycles)
    return tree, step_kind, step_name, Strings.from_list(names)


def deep_program(levels: int) -> tuple[ProgramTree, np.ndarray, np.ndarray, Strings]:
    """A chain of ``levels`` nested Repeat nodes, each with its Repeat step, the innermost
    holding one Execute (Sync, DoExchange, OnTileExecute)."""
    num_nodes = levels + 1
    parent = np.arange(-1, num_nodes - 1)
    kind = np.full(num_nodes, ProgramKind.REPEAT)
    kind[-1] = ProgramKind.EXECUTE
    names = ["loop", "Sync", "DoExchange", "deepest/Convolve"]
    name = np.zeros(num_nodes, dtype=np.int64)
    name[-1] = 3
    step_node = np.concatenate((np.arange(levels), [levels] * 3))
    step_kind = np.concatenate(
        (
            [StepKind.REPEAT] * levels,
            [StepKind.SYNC, StepKind.DO_EXCHANGE, StepKind.ON_TILE_EXECUTE],
        )
    ).astype(np.uint8)
    step_name = np.concatenate((np.zeros(levels), [1, 2, 3])).astype(np.int64)
    tree = tree_from_parents(parent, kind, name, step_node, np.full(step_node.size, 5))
    return tree, step_kind, step_name, Strings.from_list(names)


def operations(rows: int, seed: int = 0) -> OperationsTable:
    """An operations table of ``rows`` operations with random numbers."""
    rng = np.random.default_rng(seed)

    def column() -> np.ndarray:
        return rng.integers(0, 1_000_000, rows, dtype=np.int64)

    return OperationsTable(
        group_by="name",
        label_column=[f"layer{i % 50}/op{i}" for i in range(rows)],
        compute_cycles=column(),
        exchange_cycles=column(),
        sync_cycles=column(),
        other_cycles=column(),
        step_executions=column(),
        compute_sets=column(),
        vertices=column(),
        vertex_types=column(),
        code_bytes=column(),
        variables=column(),
        variable_bytes=column(),
        flops=column(),
    )
