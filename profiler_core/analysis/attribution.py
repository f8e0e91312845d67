"""Which operation ran each cycle, and in which of the framework's phases.

Every executed step's cycles go to the innermost operation that ran them: the step's debug
context. The Sync, exchange and compute steps of an Execute carry its compute set's context;
when the compute set holds vertices of several ops (a pipeline's time step runs every
stage's op in one compute set; each vertex-count row names its op, ``vc_debug``), the
steps' cycles are shared among those ops in proportion to each one's busiest tile in the
compute set -- a tile's compute cycles divided among the ops with vertices on it by their
vertex counts, else by vertices alone when no compute cycles were recorded -- and rounded so
that a step's shares add up to its cycles exactly.

The framework's phases are not operations but when operations ran: a pipeline's ramp-up,
steady state and ramp-down, the host feeds and the gradient all-reduce (``PHASE_OPS``). A
step's phase is the outermost phase above it in the program tree, else on its debug
context's chain of parents. The feeds and the all-reduce are operations too (they run their
own copies); a pipeline phase is only a phase, so its own steps (the steady state's Repeat)
belong to no operation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.debug_groups import outermost_marked
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.profile import GraphData, ProgramData, RunData

PIPELINE_PHASES = ("pipeline::rampUp", "pipeline::steadyState", "pipeline::rampDown")
#: The ops whose calls mark a phase; the pipeline's are phases only, never operations.
PHASE_OPS = (*PIPELINE_PHASES, "host::infeed", "host::outfeed", "gcl::allReduce")


@dataclass(frozen=True)
class StepPieces:
    """The steps' cycles cut by operation: a step holds one piece per operation that ran it
    (one, unless its compute set is shared), and its pieces' cycles add up to its own over
    the runs counted (0 for a step they never ran). Pieces are in step order."""

    step: np.ndarray  # int64 program step
    context: np.ndarray  # int64 debug context of the operation that ran it (-1: none)
    cycles: np.ndarray  # int64 over every execution counted
    executions: np.ndarray  # int64 executions of the step
    step_phase: np.ndarray  # int64 (steps,) debug context of each step's phase (-1: none)
    shared_steps: int  # executed steps whose cycles were shared among several operations
    phase_only_cycles: int  # cycles of a pipeline phase's own steps (no operation ran them)

    @property
    def phase(self) -> np.ndarray:
        """Each piece's phase context (-1: none)."""
        return self.step_phase[self.step]


def step_pieces(
    programs: ProgramData, graph: GraphData, runs: Sequence[RunData], debug: Any
) -> StepPieces:
    """The pieces of every step, with its cycles over ``runs`` (checked by the caller)."""
    executions = np.zeros(programs.num_steps, dtype=np.int64)
    for run in runs:
        executions += np.bincount(run.step_ids, minlength=programs.num_steps)
    duration = programs.step_cycles.max(axis=1) if programs.num_steps else executions
    every = np.arange(programs.num_steps, dtype=np.int64)  # a step never run has 0 cycles
    shares = ComputeSetShares.of(graph, programs)
    cs = execute_compute_sets(programs, graph)
    parts = np.zeros(len(cs), dtype=np.int64)
    parts[cs >= 0] = shares.count(cs[cs >= 0])
    split = parts > 0
    per_step = np.where(split, parts, 1)
    step = np.repeat(every, per_step)
    first = np.repeat(np.cumsum(per_step) - per_step, per_step)
    in_split = np.repeat(split, per_step)
    pair = np.repeat(shares.offsets[np.maximum(cs, 0)], per_step) + np.arange(len(step)) - first
    pair = np.where(in_split, pair, 0)
    own = programs.step_debug[step].astype(np.int64)
    owner = np.where(in_split, shares.context[pair] if len(shares.context) else -1, own)
    weight = np.where(in_split, shares.weight[pair] if len(shares.weight) else 1.0, 1.0)
    total = executions[step] * duration[step]
    cycles = _rounded_shares(total, weight, first)
    no_op = _lookup(phase_mask(debug, PIPELINE_PHASES), owner)
    return StepPieces(
        step=step,
        context=np.where(no_op, -1, owner),
        cycles=cycles,
        executions=executions[step],
        step_phase=_step_phases(programs, debug, phase_mask(debug)),
        shared_steps=int(np.count_nonzero((parts > 1) & (executions > 0))),
        phase_only_cycles=int(cycles[no_op].sum()),
    )


def _lookup(mask: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``mask[ids]``, False for -1 and ids past its end."""
    inside = (ids >= 0) & (ids < len(mask))
    return inside & np.append(mask, False)[np.where(inside, ids, -1)]


def _rounded_shares(total: np.ndarray, weight: np.ndarray, first: np.ndarray) -> np.ndarray:
    """``total * weight`` per piece as integers adding up to each step's total (the pieces of
    a step are contiguous; ``first`` is each piece's step's first piece): the running sum of
    the weights within a step is rounded down, so each share is off by under one cycle."""
    if not len(total):
        return np.zeros(0, dtype=np.int64)
    index = np.arange(len(total))
    running = np.cumsum(weight)
    within = np.minimum(running - (running[first] - weight[first]), 1.0)
    last = np.r_[first[1:] != first[:-1], True]
    reached = np.floor(total * within).astype(np.int64)
    reached = np.where(last, total, np.minimum(reached, total))
    before = np.where(first == index, 0, np.roll(reached, 1))
    return reached - before


@dataclass(frozen=True)
class ComputeSetShares:
    """For each compute set, the debug contexts of its vertices and each one's share of the
    compute set's cycles (they add up to 1): ``context[offsets[c] : offsets[c + 1]]``."""

    offsets: np.ndarray  # int64 (compute sets + 1,)
    context: np.ndarray  # int64
    weight: np.ndarray  # float64

    def count(self, cs: np.ndarray) -> np.ndarray:
        return self.offsets[cs + 1] - self.offsets[cs]

    @classmethod
    def of(cls, graph: GraphData, programs: ProgramData) -> ComputeSetShares:
        num_cs = len(graph.cs_name)
        columns = (graph.vc_cs, graph.vc_tile, graph.vertex_contexts())
        (cs, tile, ctx), count = _sum_runs(columns, graph.vc_count)
        # a tile's compute cycles, divided among the contexts with vertices on it
        tiles = int(max(graph.vc_tile.max(initial=0), programs.cst_tile.max(initial=0))) + 1
        place = cs * tiles + tile
        distinct, inverse = np.unique(place, return_inverse=True)
        on_tile = np.bincount(inverse, weights=count, minlength=len(distinct))[inverse]
        cst_place = programs.cst_cs.astype(np.int64) * tiles + programs.cst_tile
        order = np.argsort(cst_place, kind="stable")
        found = np.minimum(np.searchsorted(cst_place[order], place), max(len(order) - 1, 0))
        cycles = np.zeros(len(place), dtype=np.float64)
        if len(order):
            hit = cst_place[order][found] == place
            cycles[hit] = programs.cst_cycles[order[found[hit]]]
        share = cycles * count / np.maximum(on_tile, 1)
        # per (compute set, context): the busiest tile's share, and the vertices
        order = np.lexsort((ctx, cs))
        cs, ctx, share, count = cs[order], ctx[order], share[order], count[order]
        starts = _run_starts((cs, ctx))
        busiest = np.maximum.reduceat(share, starts) if len(starts) else share
        vertices = np.add.reduceat(count, starts).astype(np.float64) if len(starts) else share
        cs, ctx = cs[starts], ctx[starts]
        busy = np.bincount(cs, weights=busiest, minlength=num_cs)
        weight = np.where(busy[cs] > 0, busiest, vertices)  # no cycles recorded: by vertices
        weight = weight / np.maximum(np.bincount(cs, weights=weight, minlength=num_cs)[cs], 1e-300)
        offsets = np.searchsorted(cs, np.arange(num_cs + 1)).astype(np.int64)
        return cls(offsets, ctx, weight)


def _run_starts(keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """Where each run of equal keys starts (the keys sorted)."""
    if not len(keys[0]):
        return np.zeros(0, dtype=np.int64)
    new = np.zeros(len(keys[0]), dtype=bool)
    new[0] = True
    for key in keys:
        new[1:] |= key[1:] != key[:-1]
    return np.flatnonzero(new)


def _sum_runs(
    keys: tuple[np.ndarray, ...], values: np.ndarray
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The distinct rows of ``keys`` (sorted by the first key, then the next...) and the sum
    of ``values`` over each."""
    keys = tuple(np.asarray(k, dtype=np.int64) for k in keys)
    order = np.lexsort(keys[::-1])
    keys = tuple(k[order] for k in keys)
    starts = _run_starts(keys)
    values = np.asarray(values, dtype=np.int64)[order]
    sums = np.add.reduceat(values, starts) if len(starts) else values
    return tuple(k[starts] for k in keys), sums


def execute_compute_sets(programs: ProgramData, graph: GraphData) -> np.ndarray:
    """For each step of an Execute (its Sync, exchange and compute, which carry the compute
    set's context), the compute set; -1 for every other step."""
    num_nodes = len(programs.node_kind)
    node_cs = np.full(num_nodes + 1, -1, dtype=np.int64)  # the last entry: no node
    compute = np.flatnonzero(programs.step_cs >= 0)
    nodes = programs.step_node[compute].astype(np.int64)
    node_cs[np.where(nodes >= 0, nodes, num_nodes)] = programs.step_cs[compute]
    node_cs[num_nodes] = -1
    step_node = programs.step_node.astype(np.int64)
    cs = node_cs[np.where(step_node >= 0, step_node, num_nodes)]
    own = cs >= 0
    own[own] = programs.step_debug[own] == graph.cs_debug[cs[own]]
    return np.where(own, cs, -1)


def phase_mask(debug: Any, ops: Sequence[str] = PHASE_OPS) -> np.ndarray:
    """Whether each debug context is a call of one of ``ops`` (its API is its op)."""
    if debug is None or not len(debug):
        return np.zeros(0, dtype=bool)
    op, api, names = debug.op, debug.api, set(ops)
    if isinstance(op, StringColumn) and isinstance(api, StringColumn) and op.table is api.table:
        used = np.zeros(len(op.table), dtype=bool)  # a pass, not a sort, of 400,000 ids
        used[op.ids[op.ids >= 0]] = True
        distinct = np.flatnonzero(used)
        wanted = np.zeros(len(op.table) + 1, dtype=bool)  # the last entry: id -1
        wanted[distinct[[text in names for text in op.table.take(distinct)]]] = True
        return wanted[op.ids] & (op.ids == api.ids)
    return np.fromiter((o in names and o == a for o, a in zip(op, api, strict=True)), bool, len(op))


def _step_phases(programs: ProgramData, debug: Any, is_phase: np.ndarray) -> np.ndarray:
    """Each step's phase context: the outermost phase above it in the program tree, else on
    its context's chain of parents; -1 when there is none."""
    if not is_phase.any():
        return np.full(programs.num_steps, -1, dtype=np.int64)
    node_debug = programs.node_debug.astype(np.int64)
    node_marked = _lookup(is_phase, node_debug)
    outer = outermost_marked(node_marked, programs.node_parent.astype(np.int64))
    node_phase = np.append(np.where(node_marked[outer], node_debug[outer], -1), -1)
    step_node = programs.step_node.astype(np.int64)
    by_tree = node_phase[np.where(step_node >= 0, step_node, -1)]
    chain = outermost_marked(is_phase, np.asarray(debug.parent, dtype=np.int64))
    chain_phase = np.append(np.where(is_phase[chain], chain, -1), -1)
    own = programs.step_debug.astype(np.int64)
    own = np.where((own >= 0) & (own < len(is_phase)), own, -1)
    return np.where(by_tree >= 0, by_tree, chain_phase[own])
