"""Lowering: a program tree becomes a control tree of program steps with actions.

Every Execute becomes a Sync, the exchanges that bring remote inputs (DoExchange on one
IPU, GlobalExchange across IPU-Links), the OnTileExecute itself and the exchanges that
send remote outputs home; copies become exchanges (or on-tile copies); stream copies
become StreamCopyBegin/Mid/End. Repeat, RepeatWhile, If and Call become control nodes.
Actions are built once here, so a run is a walk over prepared closures. Lowering also
records the program tree (``nodes``) that reports show above the steps.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from ipu_engine.common.errors import GraphError, ProgramError, ShapeError, TypeMismatchError
from ipu_engine.common.types import BOOL
from ipu_engine.poplar.access import Access, RunsAccess, tensor_access
from ipu_engine.poplar.compiler.access_sets import (
    ComputeSetFacts,
    TileRuns,
    compute_set_facts,
    copy_exchange,
)
from ipu_engine.poplar.compiler.block_marks import BlockMarks
from ipu_engine.poplar.compiler.checks import check_stream_copy
from ipu_engine.poplar.compiler.known_facts import KnownFacts
from ipu_engine.poplar.compiler.steps import (
    Block,
    Branch,
    CallNode,
    Loop,
    Node,
    Step,
    StepKind,
    StepNode,
    TreeNode,
    WhileLoop,
)
from ipu_engine.poplar.compiler.vertex_plans import ComputeSetPlan
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.cost_model.exchange import ExchangePlan, stream_rearrangement
from ipu_engine.poplar.graph import Graph, variables_of
from ipu_engine.poplar.printing import print_line
from ipu_engine.poplar.program import (
    Block as BlockProgram,
)
from ipu_engine.poplar.program import (
    Call,
    Copy,
    Execute,
    If,
    PrintTensor,
    Program,
    Repeat,
    RepeatWhileTrue,
    Sequence,
    Sync,
    WriteUndef,
)
from ipu_engine.poplar.streams import DataStream
from ipu_engine.poplar.tensor import Tensor

_NO_VARS = np.zeros(0, dtype=np.int64)


class Lowering:
    """Lowers the programs of one engine; steps are numbered in program order."""

    def __init__(
        self, graph: Graph, known: KnownFacts | None = None, marks: BlockMarks | None = None
    ) -> None:
        self.graph = graph
        self.marks = marks  # lightweight profiling's blocks, when its filters are set
        self.known = known or KnownFacts()  # facts from an executable cache entry
        self.copy_plans: list[ExchangePlan] = []  # each Copy's exchange, in lowering order
        self.steps: list[Step] = []
        self.nodes: list[TreeNode] = []
        self.plans: dict[int, ComputeSetPlan] = {}
        self.cs_facts: dict[int, ComputeSetFacts] = {}
        self.tile_runs: TileRuns = {}  # each pool's tile mapping as intervals
        self.functions: dict[int, Node] = {}
        self.function_streams: dict[int, set[str]] = {}
        self.function_spans: dict[int, tuple[int, int]] = {}
        self.call_counts: dict[int, int] = {}
        self.loop_spans: list[tuple[int, int]] = []
        self._calling: set[int] = set()
        self._parent = -1
        self.root_nodes: list[int] = []  # the tree node of each engine program
        self.streams_used: set[str] = set()
        self.may_fail = False  # a user codelet or callback can raise mid-run

    # -- bookkeeping ------------------------------------------------------------------
    def _step(self, kind: StepKind, name: str, debug_id: int = -1, **kw: Any) -> Step:
        step = Step(len(self.steps), kind, name, debug_id, **kw)
        step.facts.setdefault("reads", _NO_VARS)
        step.facts.setdefault("writes", _NO_VARS)
        step.facts["node"] = self._parent
        # the first step of a node is also the first of every enclosing node without one
        parent = self._parent
        while parent >= 0 and self.nodes[parent].first_step < 0:
            self.nodes[parent].first_step = step.id
            parent = self.nodes[parent].parent
        self.steps.append(step)
        return step

    @contextlib.contextmanager
    def _node(
        self, kind: str, name: str, program: Program | None = None, **kw: Any
    ) -> Iterator[int]:
        node = TreeNode(
            kind, name, self._parent, debug_id=program.debug_id if program else -1, **kw
        )
        self.nodes.append(node)
        outer, self._parent = self._parent, len(self.nodes) - 1
        try:
            yield self._parent
        finally:
            self._parent = outer

    def lower(self, program: Program) -> Node:
        for base in type(program).__mro__:
            handler = getattr(self, f"_lower_{base.__name__}", None)
            if handler is not None:
                if self.marks is None:
                    return handler(program)
                return self.marks.around(self, program, handler)
        raise ProgramError(f"the engine cannot run a {type(program).__name__} program")

    # -- one method per program kind ---------------------------------------------------
    def _lower_Sequence(self, p: Sequence) -> Node:
        with self._node("SEQUENCE", p.name or "Sequence", p):
            return Block(items=[self.lower(q) for q in p.programs])

    def _lower_Block(self, p: BlockProgram) -> Node:
        # a Sequence of one in the program tree (whose kinds older readers know)
        with self._node("SEQUENCE", p.name or "Block", p):
            return self.lower(p.body)

    def _lower_Execute(self, p: Execute) -> Node:
        cs = p.compute_set
        if cs.id >= len(self.graph.compute_sets) or self.graph.compute_sets[cs.id] is not cs:
            raise ProgramError(f"Execute: compute set {cs.name!r} is not in this engine's graph")
        plan = self.plans.get(cs.id)
        if plan is None:
            plan = self.plans[cs.id] = ComputeSetPlan(self.graph, cs)
            known = self.known.cs_facts.get(cs.id)
            self.cs_facts[cs.id] = known or compute_set_facts(self.graph, plan, self.tile_runs)
            self.may_fail |= plan.may_fail
        facts = self.cs_facts[cs.id]
        with self._node("EXECUTE", cs.name, p):
            items = self._exchange_steps(
                facts.pre, f"{cs.name}/ExchangePre", cs.debug_id, reads=facts.reads
            )
            step = self._step(
                StepKind.ON_TILE_EXECUTE,
                cs.name,
                cs.debug_id,
                action=lambda ctx, plan=plan: plan(ctx.memory),
                compute_set=cs.id,
            )
            step.facts.update(reads=facts.reads, writes=facts.writes)
            items.append(StepNode(step))
            items += self._exchange_steps(
                facts.post, f"{cs.name}/ExchangePost", cs.debug_id, writes=facts.writes
            )
        return Block(items=items)

    def _exchange_steps(
        self,
        plan: ExchangePlan,
        name: str,
        debug_id: int,
        reads: np.ndarray = _NO_VARS,
        writes: np.ndarray = _NO_VARS,
        action: Any = None,
    ) -> list[Node]:
        """A Sync, then the on-IPU and cross-IPU exchanges of ``plan`` (if any traffic)."""
        if plan.on_ipu.empty and plan.cross_ipu.empty:
            return []
        cross = not plan.cross_ipu.empty
        sync = self._step(StepKind.SYNC, "Sync" if not cross else "GlobalSync", debug_id)
        sync.facts["global"] = cross
        items: list[Node] = [StepNode(sync)]
        for kind, traffic in (
            (StepKind.DO_EXCHANGE, plan.on_ipu),
            (StepKind.GLOBAL_EXCHANGE, plan.cross_ipu),
        ):
            if traffic.empty:
                continue
            step = self._step(kind, name, debug_id, action=action)
            action = None  # the data moves once, in the first exchange step
            step.facts.update(reads=reads, writes=writes, traffic=traffic)
            items.append(StepNode(step))
        return items

    def _lower_Copy(self, p: Copy) -> Node:
        if isinstance(p.src, DataStream) or isinstance(p.dst, DataStream):
            return self._lower_stream_copy(p)
        src, dst = p.src, p.dst
        self._own(src, "Copy source")
        self._own(dst, "Copy destination")
        if src.type != dst.type:
            raise TypeMismatchError(
                f"Copy from {src.name!r} ({src.type!r}) to {dst.name!r} ({dst.type!r}): "
                "element types differ; use popops.cast to convert"
            )
        if src.num_elements != dst.num_elements:
            raise ShapeError(
                f"Copy from {src.name!r} {src.shape} to {dst.name!r} {dst.shape}: "
                f"{src.num_elements} elements cannot fill {dst.num_elements}"
            )
        src_acc, dst_acc = tensor_access(src), tensor_access(dst)

        def action(ctx: Any) -> None:
            dst_acc.store(ctx.memory, src_acc.read(ctx.memory))

        name = p.name or f"Copy {src.name} -> {dst.name}"
        reads, writes = variables_of(self.graph, src), variables_of(self.graph, dst)
        with self._node("COPY", name, p):
            items = self._exchange_steps(
                self._copy_exchange(src, dst), name, p.debug_id, reads, writes, action
            )
            if not items:  # every element stays on its tile: an on-tile copy
                step = self._step(StepKind.ON_TILE_EXECUTE, name, p.debug_id, action=action)
                tiles = self.graph.tile_array(dst)
                step.facts.update(
                    reads=reads, writes=writes, copy_tiles=tiles, copy_bytes=dst.type.size
                )
                items = [StepNode(step)]
        return Block(items=items)

    def _lower_stream_copy(self, p: Copy) -> Node:
        to_device = isinstance(p.src, DataStream)
        stream: DataStream = p.src if to_device else p.dst  # type: ignore[assignment]
        tensor = p.dst if to_device else p.src
        if not isinstance(tensor, Tensor):
            raise ProgramError("a stream copy needs a tensor at the other end")
        self._own(tensor, "stream copy")
        check_stream_copy(self.graph, stream, tensor, to_device)
        self.streams_used.add(stream.name)
        acc = tensor_access(tensor)
        name, count = stream.name, stream.num_elements
        if to_device:

            def action(ctx: Any) -> None:
                acc.store(ctx.memory, ctx.streams[name].pull(count))

        else:

            def action(ctx: Any) -> None:
                ctx.streams[name].push_from(acc, ctx.memory)

        variables = variables_of(self.graph, tensor)
        facts = {
            "stream": stream,
            "tiles": self.graph.tile_array(tensor),
            "elem_size": tensor.type.size,
            "reads": _NO_VARS if to_device else variables,
            "writes": variables if to_device else _NO_VARS,
        }
        items: list[Node] = []
        with self._node("STREAM_COPY", p.name or name, p):
            sync = self._step(StepKind.SYNC, "HostSync", stream.debug_id)
            # the host sync spans IPUs only when there are several: one IPU syncs alone
            sync.facts.update({"host": True, "global": self.graph.target.num_ipus > 1})
            items.append(StepNode(sync))
            for kind, act in (
                (StepKind.STREAM_COPY_BEGIN, None),
                (StepKind.STREAM_COPY_MID, action),
                (StepKind.STREAM_COPY_END, None),
            ):
                step = self._step(kind, name, stream.debug_id, action=act)
                step.facts.update(facts)
                items.append(StepNode(step))
            if to_device and C.REARRANGE_STREAMED_DATA:
                items += self._exchange_steps(
                    stream_rearrangement(self.graph.target, facts["tiles"], tensor.type.size),
                    f"{name}/Rearrange",
                    stream.debug_id,
                    writes=variables,
                )
        return Block(items=items)

    def _lower_Repeat(self, p: Repeat) -> Node:
        with self._node("REPEAT", p.name or f"Repeat x{p.count}", p, count=p.count):
            step = self._step(StepKind.REPEAT, p.name or f"Repeat x{p.count}", p.debug_id)
            body = self.lower(p.body)
        self.loop_spans.append((step.id, len(self.steps) - 1))
        return Loop(step, count=p.count, body=body)

    def _lower_RepeatWhileTrue(self, p: RepeatWhileTrue) -> Node:
        with self._node("REPEAT_WHILE", p.name or p.kind, p):
            step = self._step(StepKind.REPEAT_WHILE, p.name or p.kind, p.debug_id)
            pred = self._predicate(p.predicate, p.kind)
            step.facts["reads"] = variables_of(self.graph, p.predicate)
            cond, body = self.lower(p.cond), self.lower(p.body)
        self.loop_spans.append((step.id, len(self.steps) - 1))
        return WhileLoop(step, cond=cond, predicate=pred, body=body, until=p.until)

    def _lower_If(self, p: If) -> Node:
        with self._node("IF", p.name or "If", p):
            step = self._step(StepKind.IF, p.name or "If", p.debug_id)
            pred = self._predicate(p.predicate, "If")
            step.facts["reads"] = variables_of(self.graph, p.predicate)
            then, else_ = self.lower(p.then), self.lower(p.else_)
        return Branch(step, predicate=pred, then=then, else_=else_)

    def _lower_Call(self, p: Call) -> Node:
        fid = p.function.id
        functions = self.graph.functions
        if fid >= len(functions) or functions[fid] is not p.function:
            raise ProgramError(f"Call: function {p.function.name!r} is not in this engine's graph")
        if fid in self._calling:
            raise ProgramError(
                f"function {p.function.name!r} calls itself; IPU programs cannot recurse"
            )
        self.call_counts[fid] = self.call_counts.get(fid, 0) + 1
        with self._node("CALL", p.name or p.function.name, p, function=fid):
            step = self._step(StepKind.CALL, p.name or p.function.name, p.debug_id)
        if fid not in self.functions:
            self._lower_function(fid)
        self.streams_used |= self.function_streams[fid]
        return CallNode(step, function=fid)

    def _lower_function(self, fid: int) -> None:
        function = self.graph.functions[fid]
        self._calling.add(fid)
        outer_streams, self.streams_used = self.streams_used, set()
        outer_parent, self._parent = self._parent, -1
        first = len(self.steps)
        try:
            with self._node("FUNCTION", function.name, function=fid):
                self.functions[fid] = self.lower(function.program)
            self.function_streams[fid] = self.streams_used
            self.function_spans[fid] = (first, len(self.steps) - 1)
        finally:
            self._calling.discard(fid)
            self.streams_used = outer_streams
            self._parent = outer_parent

    def _lower_PrintTensor(self, p: PrintTensor) -> Node:
        self._own(p.tensor, "PrintTensor")
        acc = tensor_access(p.tensor)
        shape, title = p.tensor.shape, p.title

        def action(ctx: Any) -> None:
            values = acc.read(ctx.memory).reshape(shape)
            out = ctx.print_stream or sys.stdout
            out.write(print_line(title, values) + "\n")

        with self._node("PRINT_TENSOR", f"PrintTensor {title}", p):
            step = self._step(
                StepKind.PRINT_TENSOR, f"PrintTensor {title}", p.debug_id, action=action
            )
        step.facts.update(
            reads=variables_of(self.graph, p.tensor),
            tiles=self.graph.tile_array(p.tensor),
            elem_size=p.tensor.type.size,
        )
        return StepNode(step)

    def _lower_Sync(self, p: Sync) -> Node:
        with self._node("SYNC", p.name or "Sync", p):
            step = self._step(StepKind.SYNC, p.name or "Sync", p.debug_id)
        step.facts["global"] = p.global_
        return StepNode(step)

    def _lower_WriteUndef(self, p: WriteUndef) -> Node:
        self._own(p.tensor, "WriteUndef")
        with self._node("WRITE_UNDEF", f"WriteUndef {p.tensor.name}", p):
            step = self._step(StepKind.WRITE_UNDEF, f"WriteUndef {p.tensor.name}", p.debug_id)
        return StepNode(step)

    # -- helpers ------------------------------------------------------------------------
    def _copy_exchange(self, src: Tensor, dst: Tensor) -> ExchangePlan:
        known = self.known.copy_plans
        n = len(self.copy_plans)
        plan = known[n] if n < len(known) else copy_exchange(self.graph, src, dst)
        self.copy_plans.append(plan)
        return plan

    def _own(self, tensor: Tensor, what: str) -> None:
        if not isinstance(tensor, Tensor):
            raise ProgramError(f"{what} must be a tensor, got {type(tensor).__name__}")
        if tensor.graph is not self.graph:
            raise GraphError(f"{what}: tensor {tensor.name!r} belongs to another graph")

    def _predicate(self, tensor: Tensor, what: str) -> Access | RunsAccess:
        self._own(tensor, f"{what} predicate")
        if not (tensor.type == BOOL or tensor.type.numpy_dtype.kind in "iu"):
            raise TypeMismatchError(
                f"{what} predicate {tensor.name!r} is {tensor.type!r}; use a BOOL or integer scalar"
            )
        return tensor_access(tensor)
