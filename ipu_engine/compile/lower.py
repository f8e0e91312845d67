"""Lowering: a program tree becomes a control tree of program steps with actions.

Every Execute, Copy, stream copy and print becomes one or more steps with Poplar's
kinds; Repeat, RepeatWhile, If and Call become control nodes. Actions are built here
once, so running a program is a walk over prepared closures.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ipu_engine.access import Access
from ipu_engine.compile.steps import (
    Block,
    Branch,
    CallNode,
    Loop,
    Node,
    Step,
    StepKind,
    StepNode,
    WhileLoop,
)
from ipu_engine.compile.vertex_plans import ComputeSetPlan
from ipu_engine.errors import GraphError, ProgramError, ShapeError, TypeMismatchError
from ipu_engine.graph import Graph
from ipu_engine.printing import print_line
from ipu_engine.program import (
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
from ipu_engine.streams import DataStream, StreamDirection
from ipu_engine.tensor import Tensor
from ipu_engine.types import BOOL


class Lowering:
    """Lowers the programs of one engine; steps are numbered in lowering order."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.steps: list[Step] = []
        self.plans: dict[int, ComputeSetPlan] = {}
        self.functions: dict[int, Node] = {}
        self.function_streams: dict[int, set[str]] = {}
        self._calling: set[int] = set()
        self.streams_used: set[str] = set()
        self.may_fail = False  # a user codelet or callback can raise mid-run

    def _step(self, kind: StepKind, name: str, debug_id: int = -1, **kw: Any) -> Step:
        step = Step(len(self.steps), kind, name, debug_id, **kw)
        self.steps.append(step)
        return step

    def lower(self, program: Program) -> Node:
        handler = getattr(self, f"_lower_{type(program).__name__}", None)
        if handler is None:
            for base in type(program).__mro__:
                handler = getattr(self, f"_lower_{base.__name__}", None)
                if handler is not None:
                    break
        if handler is None:
            raise ProgramError(f"the engine cannot run a {type(program).__name__} program")
        return handler(program)

    # -- one method per program kind ---------------------------------------------------
    def _lower_Sequence(self, p: Sequence) -> Node:
        return Block(items=[self.lower(q) for q in p.programs])

    def _lower_Execute(self, p: Execute) -> Node:
        cs = p.compute_set
        if cs.id >= len(self.graph.compute_sets) or self.graph.compute_sets[cs.id] is not cs:
            raise ProgramError(f"Execute: compute set {cs.name!r} is not in this engine's graph")
        plan = self.plans.get(cs.id)
        if plan is None:
            plan = self.plans[cs.id] = ComputeSetPlan(self.graph, cs)
            self.may_fail |= plan.may_fail
        step = self._step(
            StepKind.ON_TILE_EXECUTE,
            cs.name,
            cs.debug_id,
            action=lambda ctx, plan=plan: plan(ctx.memory),
            compute_set=cs.id,
        )
        return StepNode(step)

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
        src_acc, dst_acc = Access(src.type, src.flat_addr()), Access(dst.type, dst.flat_addr())
        kind = self._copy_kind(src, dst)
        name = p.name or f"Copy {src.name} -> {dst.name}"

        def action(ctx: Any) -> None:
            dst_acc.store(ctx.memory, src_acc.read(ctx.memory))

        step = self._step(kind, name, p.debug_id, action=action)
        step.facts["copy"] = (src, dst)
        return StepNode(step)

    def _copy_kind(self, src: Tensor, dst: Tensor) -> StepKind:
        src_tiles, dst_tiles = self.graph.tile_array(src), self.graph.tile_array(dst)
        if np.array_equal(src_tiles, dst_tiles) and np.unique(src_tiles).size <= 1:
            return StepKind.ON_TILE_EXECUTE
        per_ipu = self.graph.target.tiles_per_ipu
        if np.any(src_tiles // per_ipu != dst_tiles // per_ipu):
            return StepKind.GLOBAL_EXCHANGE
        return StepKind.DO_EXCHANGE

    def _lower_stream_copy(self, p: Copy) -> Node:
        to_device = isinstance(p.src, DataStream)
        stream: DataStream = p.src if to_device else p.dst  # type: ignore[assignment]
        tensor = p.dst if to_device else p.src
        if not isinstance(tensor, Tensor):
            raise ProgramError("a stream copy needs a tensor at the other end")
        self._own(tensor, "stream copy")
        if self.graph.streams.get(stream.name) is not stream:
            raise ProgramError(f"stream {stream.name!r} is not in this engine's graph")
        wanted = StreamDirection.HOST_TO_DEVICE if to_device else StreamDirection.DEVICE_TO_HOST
        if stream.direction is not wanted:
            raise ProgramError(
                f"stream {stream.name!r} is {stream.direction.value}; it cannot be copied "
                f"{'to' if to_device else 'from'} tensor {tensor.name!r}"
            )
        if stream.type != tensor.type:
            raise TypeMismatchError(
                f"stream {stream.name!r} carries {stream.type!r} but tensor {tensor.name!r} "
                f"is {tensor.type!r}"
            )
        if stream.num_elements != tensor.num_elements:
            raise ShapeError(
                f"stream {stream.name!r} moves {stream.num_elements} elements per copy but "
                f"tensor {tensor.name!r} has {tensor.num_elements}"
            )
        self.streams_used.add(stream.name)
        acc = Access(tensor.type, tensor.flat_addr())
        name = stream.name
        if to_device:

            def action(ctx: Any) -> None:
                acc.store(ctx.memory, ctx.streams[name].pull(stream.num_elements))

        else:

            def action(ctx: Any) -> None:
                ctx.streams[name].push(acc.read(ctx.memory))

        facts = {"stream": stream, "tensor": tensor}
        items: list[Node] = []
        for kind, act in (
            (StepKind.STREAM_COPY_BEGIN, None),
            (StepKind.STREAM_COPY_MID, action),
            (StepKind.STREAM_COPY_END, None),
        ):
            step = self._step(kind, f"{name}", stream.debug_id, action=act)
            step.facts.update(facts)
            items.append(StepNode(step))
        return Block(items=items)

    def _lower_Repeat(self, p: Repeat) -> Node:
        step = self._step(StepKind.REPEAT, p.name or f"Repeat x{p.count}", p.debug_id)
        return Loop(step, count=p.count, body=self.lower(p.body))

    def _lower_RepeatWhileTrue(self, p: RepeatWhileTrue) -> Node:
        step = self._step(StepKind.REPEAT_WHILE, p.name or p.kind, p.debug_id)
        pred = self._predicate(p.predicate, p.kind)
        return WhileLoop(
            step, cond=self.lower(p.cond), predicate=pred, body=self.lower(p.body), until=p.until
        )

    def _lower_If(self, p: If) -> Node:
        step = self._step(StepKind.IF, p.name or "If", p.debug_id)
        pred = self._predicate(p.predicate, "If")
        return Branch(step, predicate=pred, then=self.lower(p.then), else_=self.lower(p.else_))

    def _lower_Call(self, p: Call) -> Node:
        fid = p.function.id
        if self.graph.functions[fid] is not p.function if fid < len(self.graph.functions) else True:
            raise ProgramError(f"Call: function {p.function.name!r} is not in this engine's graph")
        if fid in self._calling:
            raise ProgramError(
                f"function {p.function.name!r} calls itself; IPU programs cannot recurse"
            )
        if fid not in self.functions:
            self._calling.add(fid)
            outer, self.streams_used = self.streams_used, set()
            try:
                self.functions[fid] = self.lower(p.function.program)
                self.function_streams[fid] = self.streams_used
            finally:
                self._calling.discard(fid)
                self.streams_used = outer
        self.streams_used |= self.function_streams[fid]
        step = self._step(StepKind.CALL, p.name or p.function.name, p.debug_id)
        return CallNode(step, function=fid)

    def _lower_PrintTensor(self, p: PrintTensor) -> Node:
        self._own(p.tensor, "PrintTensor")
        acc = Access(p.tensor.type, p.tensor.flat_addr())
        shape, title = p.tensor.shape, p.title

        def action(ctx: Any) -> None:
            values = acc.read(ctx.memory).reshape(shape)
            out = ctx.print_stream or sys.stdout
            out.write(print_line(title, values) + "\n")

        return StepNode(
            self._step(StepKind.PRINT, f"PrintTensor {title}", p.debug_id, action=action)
        )

    def _lower_Sync(self, p: Sync) -> Node:
        return StepNode(self._step(StepKind.SYNC, p.name or "Sync", p.debug_id))

    def _lower_WriteUndef(self, p: WriteUndef) -> Node:
        self._own(p.tensor, "WriteUndef")
        step = self._step(StepKind.WRITE_UNDEF, f"WriteUndef {p.tensor.name}", p.debug_id)
        step.facts["tensor"] = p.tensor
        return StepNode(step)

    # -- helpers ------------------------------------------------------------------------
    def _own(self, tensor: Tensor, what: str) -> None:
        if not isinstance(tensor, Tensor):
            raise ProgramError(f"{what} must be a tensor, got {type(tensor).__name__}")
        if tensor.graph is not self.graph:
            raise GraphError(f"{what}: tensor {tensor.name!r} belongs to another graph")

    def _predicate(self, tensor: Tensor, what: str) -> Access:
        self._own(tensor, f"{what} predicate")
        if not (tensor.type == BOOL or tensor.type.numpy_dtype.kind in "iu"):
            raise TypeMismatchError(
                f"{what} predicate {tensor.name!r} is {tensor.type!r}; use a BOOL or integer scalar"
            )
        return Access(tensor.type, tensor.flat_addr())
