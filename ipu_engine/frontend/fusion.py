"""Lanes that run side by side: replicas and pipeline stages sharing compute sets.

IPUs run in lock-step BSP steps and a step's cycles on each IPU come from the vertices on
its tiles, so work on different IPUs overlaps only if it is in the same compute set. A
``FusionRegion`` builds several lanes -- each the same library ops a lone program would
use -- so that the j-th compute set every lane creates is one shared compute set, and
zips their programs: one Execute per shared compute set, and the copies that sit between
them merged into one Copy per element type (one exchange moving every lane's data).

A lane built in one region can be added to another (a pipeline's ramp-up after its
steady state): its vertices are cloned into that region's compute sets, on the same
tensors, so no tensor is duplicated.

A shared compute set has one debug context, but its vertices keep the op that added them:
each lane's part has a context of the lane's op (the one a lone compute set would have had),
which the lane's vertex blocks carry, so reports give each op its own vertices and cycles.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ipu_engine.common.errors import EngineError
from ipu_engine.poplar.compiler.checks import finalize_pending_edges
from ipu_engine.poplar.cost_model.vertex_memory import block_owner
from ipu_engine.poplar.graph import Graph, variables_of
from ipu_engine.poplar.program import Copy, Execute, Program, Sequence
from ipu_engine.poplar.tensor import Tensor, concat
from ipu_engine.poplar.vertices import ComputeSet, VertexBlock


class FusingGraph(Graph):
    """A graph whose library ops can build into a fusion region's shared compute sets."""

    def __init__(self, target: object) -> None:
        super().__init__(target)  # type: ignore[arg-type]
        self.region: FusionRegion | None = None
        self.journal = None  # the front end's record is its traced IR, not these calls

    def add_compute_set(self, name: str = "") -> ComputeSet:
        region = self.region
        if region is None or region.lane is None:
            return super().add_compute_set(name)
        return region.shared_compute_set(
            lambda: super(FusingGraph, self).add_compute_set(name),
            lambda cs: self.debug.add(name or cs.name.rsplit("/", 1)[-1], "Graph.add_compute_set"),
        )


@dataclass(eq=False)
class Lane:
    """One lane's programs and, per shared compute set it used, the vertices it added."""

    prog: Sequence
    name: str
    compute_sets: list[ComputeSet] = field(default_factory=list)
    blocks: list[list[VertexBlock]] = field(default_factory=list)
    #: per shared compute set, the debug context of this lane's part (its op's)
    contexts: list[int] = field(default_factory=list)


class FusionRegion:
    """Lanes whose j-th compute sets are one compute set; see the module docstring."""

    def __init__(self, graph: FusingGraph, name: str = "", debug_id: int = -1) -> None:
        self.graph = graph
        self.name = name
        # a region that mixes different ops in one compute set (a pipeline's time step) is
        # an operation of its own: its compute sets and copies carry this context
        self.debug_id = debug_id
        self.compute_sets: list[ComputeSet] = []
        self.lanes: list[Lane] = []
        self.lane: Lane | None = None

    @contextlib.contextmanager
    def build_lane(self, name: str = "") -> Iterator[Lane]:
        """Library ops called inside build into this region; append programs to ``lane.prog``."""
        if self.graph.region is not None:
            raise EngineError("fusion regions do not nest")
        lane = Lane(Sequence(), name)
        starts = [len(cs.blocks) for cs in self.compute_sets]
        self.graph.region, self.lane = self, lane
        try:
            yield lane
        finally:
            self.graph.region, self.lane = None, None
        for j, cs in enumerate(lane.compute_sets):
            lane.blocks.append(cs.blocks[starts[j] if j < len(starts) else 0 :])
            _belong(lane.blocks[-1], lane.contexts[j], cs)
        self.lanes.append(lane)

    def shared_compute_set(
        self, make: Callable[[], ComputeSet], part_context: Callable[[ComputeSet], int]
    ) -> ComputeSet:
        """The lane's next compute set: made now if it is the first lane to need it, else
        the one the first lane made. ``part_context`` makes the debug context of this lane's
        part of a compute set another lane made."""
        lane = self.lane
        assert lane is not None
        j = len(lane.compute_sets)
        if j == len(self.compute_sets):
            made = make()
            lane.contexts.append(made.debug_id)  # before the region may claim the set
            self.compute_sets.append(self._owned(made))
        else:
            lane.contexts.append(part_context(self.compute_sets[j]))
        lane.compute_sets.append(self.compute_sets[j])
        return self.compute_sets[j]

    def _owned(self, cs: ComputeSet) -> ComputeSet:
        if self.debug_id >= 0:
            cs.debug_id = self.debug_id
        return cs

    def add_clone(self, lane: Lane, prefix: str) -> Lane:
        """``lane`` again in this region: its vertices cloned, its programs re-pointed."""
        clone = Lane(Sequence(), lane.name)
        moved: dict[int, ComputeSet] = {}
        for j, (cs, blocks) in enumerate(zip(lane.compute_sets, lane.blocks, strict=True)):
            if j == len(self.compute_sets):
                made = self.graph.add_compute_set(f"{prefix}/{cs.name}")
                self.compute_sets.append(self._owned(made))
            shared = self.compute_sets[j]
            for block in blocks:
                _clone_block(self.graph, block, shared)
            clone.compute_sets.append(shared)
            clone.contexts.append(lane.contexts[j])  # the same op, run in another region
            moved[cs.id] = shared
        for p in flatten(lane.prog):
            if isinstance(p, Execute) and p.compute_set.id in moved:
                execute = Execute(moved[p.compute_set.id])
                execute.debug_id = p.debug_id
                p = execute
            clone.prog.add(p)
        self.lanes.append(clone)
        return clone

    def programs(self) -> list[Program]:
        """Every lane's programs zipped: between shared Executes, the lanes' copies merged."""
        queues = [flatten(lane.prog) for lane in self.lanes]
        pos = [0] * len(queues)
        out: list[Program] = []
        for j, cs in enumerate(self.compute_sets):
            pending: list[list[Program]] = []
            execute: Program | None = None
            for li, lane in enumerate(self.lanes):
                if j >= len(lane.compute_sets):
                    continue
                before, found = _take_until(queues[li], pos, li, cs, self)
                pending.append(before)
                execute = execute or found
            out += merge_copies(self.graph, pending)
            assert execute is not None
            out.append(execute)
        out += merge_copies(self.graph, [q[pos[i] :] for i, q in enumerate(queues)])
        return out


def _take_until(
    queue: list[Program], pos: list[int], li: int, cs: ComputeSet, region: FusionRegion
) -> tuple[list[Program], Program]:
    before = []
    while pos[li] < len(queue):
        p = queue[pos[li]]
        pos[li] += 1
        if isinstance(p, Execute) and p.compute_set is cs:
            return before, p
        if isinstance(p, Execute) and any(p.compute_set is c for c in region.compute_sets):
            raise EngineError(
                f"fusion region {region.name!r}: a lane executes compute set "
                f"{p.compute_set.name!r} out of the order it created it in"
            )
        before.append(p)
    raise EngineError(
        f"fusion region {region.name!r}: a lane created compute set {cs.name!r} "
        "but never executed it"
    )


def flatten(program: Program) -> list[Program]:
    if isinstance(program, Sequence) and not program.name:
        return [q for p in program.programs for q in flatten(p)]
    return [program]


def _tensor_copy(p: Program) -> bool:
    return isinstance(p, Copy) and isinstance(p.src, Tensor) and isinstance(p.dst, Tensor)


def merge_copies(graph: Graph, per_lane: list[list[Program]]) -> list[Program]:
    """The lanes' programs in order, their tensor copies merged into one per type when
    every program is such a copy and none reads what another writes."""
    programs = [p for lane in per_lane for p in lane]
    if len(programs) < 2 or not all(_tensor_copy(p) for p in programs):
        return programs
    reads = [set(variables_of(graph, p.src).tolist()) for p in programs]  # type: ignore[attr-defined]
    writes = [set(variables_of(graph, p.dst).tolist()) for p in programs]  # type: ignore[attr-defined]
    for i, w in enumerate(writes):
        if any(w & r for k, r in enumerate(reads) if k != i):
            return programs
    by_type: dict[object, list[Copy]] = {}
    for p in programs:
        by_type.setdefault(p.src.type, []).append(p)  # type: ignore[union-attr]
    return [fused_copy(group, "IpuCopy") for group in by_type.values()]


def fused_copy(copies: list[Copy], name: str) -> Copy:
    """One Copy moving what ``copies`` move (they must not overlap)."""
    if len(copies) == 1:
        return copies[0]
    src = concat([c.src.flatten() for c in copies])  # type: ignore[union-attr]
    dst = concat([c.dst.flatten() for c in copies])  # type: ignore[union-attr]
    fused = Copy(src, dst, name=name)
    fused.debug_id = copies[0].debug_id
    return fused


def _belong(blocks: list[VertexBlock], context: int, cs: ComputeSet) -> None:
    """``blocks`` were added by the op of ``context``: say so where the compute set's own
    context is another (the set is shared, or a region claimed it)."""
    if context != cs.debug_id:
        for block in blocks:
            block.debug_id = context


def _clone_block(graph: Graph, block: VertexBlock, cs: ComputeSet) -> None:
    finalize_pending_edges(block)
    clone = graph.add_vertex_block(
        cs,
        block.codelet,
        block.tiles.copy(),
        dict(block.edges),
        {k: v.copy() for k, v in block.state.items()},
        dict(block.edge_types),
    )
    if block.perf_estimate is not None:
        clone.perf_estimate = block.perf_estimate.copy()
    # its op's context, as in the region it was built in (its compute set's there when -1)
    _belong([clone], block_owner(graph, block), cs)
