"""Element-wise codelets: binary and unary ops, cast, fill and scaled add, batched.

Each vertex covers the elements of one tile; a compute set of them runs as one numpy
call over every vertex's elements concatenated.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ipu_engine.codelets.flat_views import apply_on_views, flat_views, views_plan
from ipu_engine.codelets.ops_table import BINARY_OPS, UNARY_OPS, ElementOp
from ipu_engine.common.types import BOOL, Type
from ipu_engine.poplar import workers
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import InOut, Input, Output, State, Vertex, VertexBatch, VertexSizes


class ElementwiseVertex(Vertex):
    """Base of the element-wise codelets: a supervisor vertex splitting its elements over
    the six workers, so the tile issues about one element's work per ``cycles_per_element``."""

    op: ClassVar[ElementOp | None] = None
    elements_field: ClassVar[str] = "out"
    operands: ClassVar[tuple[str, ...]] = ()  # fields the op reads, in order
    supervisor = True
    code_bytes = 320

    @classmethod
    def cycles_per_element(cls) -> float:
        return cls.op.cycles_per_element if cls.op else 0.5

    @classmethod
    def flops_per_element(cls) -> int:
        return cls.op.flops_per_element if cls.op else 0

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        n = sizes.elements(cls.elements_field)
        return SUPERVISOR_OVERHEAD_CYCLES + n * cls.cycles_per_element()

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        field = cls.fields[cls.elements_field]
        floating = any(f.type is not None and f.type.is_float for f in cls.fields.values())
        if not floating or field is None:
            return np.zeros(sizes.count, dtype=np.int64)
        return (sizes.elements(cls.elements_field) * cls.flops_per_element()).astype(np.int64)


def _codelet(class_name: str, type_name: str, compute_batch: Callable, **attrs: Any) -> type:
    """A registered element-wise codelet class with these fields and batched compute."""
    namespace = {**attrs, "type_name": type_name, "compute_batch": classmethod(compute_batch)}
    return register_builtin(type(class_name, (ElementwiseVertex,), namespace))


_TEAM = "views_plan"  # (the pools, the team plan found on them or None)


def _apply_op(cls: type, batch: VertexBatch) -> None:
    """``out = op(operands...)`` over every vertex's elements at once: on strided views of
    memory in the outputs' address order when they are (see ``flat_views``)."""
    result = cls.elements_field
    views = flat_views(batch, cls.operands, result)
    if views is not None:
        _run_on_views(cls, batch, views)
        return
    # an output that is not also an operand is written whole: its old values are not read
    out = batch[result] if result in cls.operands else batch.output(result)
    cls.op.fn(*(batch[f] for f in cls.operands), out=out)


def _run_on_views(cls: type, batch: VertexBatch, views: dict) -> None:
    """The op on the views of memory: by the team's threads, a range of the output's rows
    each, when C computes it alike (``flat_views.views_plan``: found on the first run, kept
    while memory is the same arrays); else ``apply_on_views``."""
    fields = (*cls.operands, cls.elements_field)
    pools = tuple(batch.pool(f) for f in fields)
    kept = batch.cache.get(_TEAM)
    found = kept is not None and all(a is b for a, b in zip(kept[0], pools, strict=True))
    if found and kept[1] is not None:
        run = functools.partial(_run_team, kept[1])
        run()
        batch.repeat(run)  # the next runs: this call alone
        return
    args = [views[f].of(batch.pool(f)) for f in cls.operands]
    out = views[cls.elements_field].of(batch.pool(cls.elements_field))
    if not found:
        kept = batch.cache[_TEAM] = (pools, views_plan(cls.op.fn, args, out))
        if kept[1] is not None:
            kept[1].run(workers.cores())
            return
    apply_on_views(cls.op.fn, args, out)


def _run_team(plan: Any) -> None:  # a team.TeamPieces
    plan.run(workers.cores())


@functools.cache
def binary_op(op_name: str, dtype: Type, in_place: bool = False) -> type[Vertex]:
    op = BINARY_OPS[op_name]
    kind = "BinaryOp1DInPlace" if in_place else "BinaryOp1D"
    type_name = f"popops::{kind}<popops::expr::BinaryOpType::{op_name},{dtype.name}>"
    if in_place:
        fields = {"in1Out": InOut(dtype), "in2": Input(dtype)}
        operands, result = ("in1Out", "in2"), "in1Out"
    else:
        out_type = BOOL if op.bool_result else dtype
        fields = {"in1": Input(dtype), "in2": Input(dtype), "out": Output(out_type)}
        operands, result = ("in1", "in2"), "out"
    return _codelet(
        kind, type_name, _apply_op, **fields, op=op, operands=operands, elements_field=result
    )


@functools.cache
def unary_op(op_name: str, dtype: Type, in_place: bool = False) -> type[Vertex]:
    op = UNARY_OPS[op_name]
    kind = "UnaryOp1DInPlace" if in_place else "UnaryOp1D"
    type_name = f"popops::{kind}<popops::expr::UnaryOpType::{op_name},{dtype.name}>"
    if in_place:
        fields, operands, result = {"inOut": InOut(dtype)}, ("inOut",), "inOut"
    else:
        out_type = BOOL if op.bool_result else dtype
        fields, operands, result = {"in_": Input(dtype), "out": Output(out_type)}, ("in",), "out"
    return _codelet(
        kind, type_name, _apply_op, **fields, op=op, operands=operands, elements_field=result
    )


@functools.cache
def cast(src: Type, dst: Type) -> type[Vertex]:
    def compute_batch(cls: type, batch: VertexBatch) -> None:
        batch["out"][...] = batch["src"]

    type_name = f"popops::Cast1D<{src.name},{dst.name}>"
    return _codelet("Cast1D", type_name, compute_batch, src=Input(src), out=Output(dst))


@functools.cache
def fill(dtype: Type) -> type[Vertex]:
    def compute_batch(cls: type, batch: VertexBatch) -> None:
        out, offsets = batch["out"], batch.offsets("out")
        out[...] = np.repeat(batch.state("value"), np.diff(offsets))

    type_name = f"popops::Fill<{dtype.name}>"
    return _codelet("Fill", type_name, compute_batch, out=Output(dtype), value=State(dtype, 0))


@functools.cache
def scaled_add(dtype: Type) -> type[Vertex]:
    """data += scale * deltas, the SGD update of PopLibs' ScaledAddSupervisor."""

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        scale = np.repeat(batch.state("scaleB"), batch.sizes("data"))
        batch["data"][...] += scale * batch["deltas"]

    return _codelet(
        "ScaledAdd",
        f"popops::ScaledAddSupervisor<{dtype.name},{dtype.name},true>",
        compute_batch,
        data=InOut(dtype),
        deltas=Input(dtype),
        scaleB=State(dtype, 1.0),
        elements_field="data",
        op=ElementOp("SCALED_ADD", np.add, 2, 1.0, 2),
    )
