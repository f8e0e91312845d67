"""Element-wise codelets: binary and unary ops, cast, fill and scaled add, batched.

Each vertex covers the elements of one tile; a compute set of them runs as one numpy
call over every vertex's elements concatenated.
"""

from __future__ import annotations

import functools
from typing import ClassVar

import numpy as np

from ipu_engine.codelets import register_builtin
from ipu_engine.codelets.ops_table import BINARY_OPS, UNARY_OPS, ElementOp
from ipu_engine.model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.types import BOOL, Type
from ipu_engine.vertex import InOut, Input, Output, State, Vertex, VertexBatch, VertexSizes


class ElementwiseVertex(Vertex):
    """Base of the element-wise codelets: a supervisor vertex splitting its elements over
    the six workers, so the tile issues about one element's work per ``cycles_per_element``."""

    op: ClassVar[ElementOp | None] = None
    elements_field: ClassVar[str] = "out"
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


@functools.cache
def binary_op(op_name: str, dtype: Type, in_place: bool = False) -> type[Vertex]:
    op = BINARY_OPS[op_name]
    out_type = BOOL if op.bool_result else dtype
    if in_place:
        name = f"popops::BinaryOp1DInPlace<popops::expr::BinaryOpType::{op_name},{dtype.name}>"

        def compute_batch(cls: type, batch: VertexBatch) -> None:
            cls.op.fn(batch["in1Out"], batch["in2"], out=batch["in1Out"])

        attrs = {"in1Out": InOut(dtype), "in2": Input(dtype), "elements_field": "in1Out"}
    else:
        name = f"popops::BinaryOp1D<popops::expr::BinaryOpType::{op_name},{dtype.name}>"

        def compute_batch(cls: type, batch: VertexBatch) -> None:
            cls.op.fn(batch["in1"], batch["in2"], out=batch["out"])

        attrs = {"in1": Input(dtype), "in2": Input(dtype), "out": Output(out_type)}
    cls = type(
        "BinaryOp1D",
        (ElementwiseVertex,),
        {
            **attrs,
            "type_name": name,
            "op": op,
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)


@functools.cache
def unary_op(op_name: str, dtype: Type, in_place: bool = False) -> type[Vertex]:
    op = UNARY_OPS[op_name]
    out_type = BOOL if op.bool_result else dtype
    if in_place:
        name = f"popops::UnaryOp1DInPlace<popops::expr::UnaryOpType::{op_name},{dtype.name}>"

        def compute_batch(cls: type, batch: VertexBatch) -> None:
            cls.op.fn(batch["inOut"], out=batch["inOut"])

        attrs = {"inOut": InOut(dtype), "elements_field": "inOut"}
    else:
        name = f"popops::UnaryOp1D<popops::expr::UnaryOpType::{op_name},{dtype.name}>"

        def compute_batch(cls: type, batch: VertexBatch) -> None:
            cls.op.fn(batch["in"], out=batch["out"])

        attrs = {"in_": Input(dtype), "out": Output(out_type)}
    cls = type(
        "UnaryOp1D",
        (ElementwiseVertex,),
        {
            **attrs,
            "type_name": name,
            "op": op,
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)


@functools.cache
def cast(src: Type, dst: Type) -> type[Vertex]:
    def compute_batch(cls: type, batch: VertexBatch) -> None:
        batch["out"][...] = batch["src"]

    cls = type(
        "Cast1D",
        (ElementwiseVertex,),
        {
            "src": Input(src),
            "out": Output(dst),
            "type_name": f"popops::Cast1D<{src.name},{dst.name}>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)


@functools.cache
def fill(dtype: Type) -> type[Vertex]:
    def compute_batch(cls: type, batch: VertexBatch) -> None:
        out, offsets = batch["out"], batch.offsets("out")
        out[...] = np.repeat(batch.state("value"), np.diff(offsets))

    cls = type(
        "Fill",
        (ElementwiseVertex,),
        {
            "out": Output(dtype),
            "value": State(dtype, 0),
            "type_name": f"popops::Fill<{dtype.name}>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)


@functools.cache
def scaled_add(dtype: Type) -> type[Vertex]:
    """data += scale * deltas, the SGD update of PopLibs' ScaledAddSupervisor."""

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        scale = np.repeat(batch.state("scaleB"), batch.sizes("data"))
        batch["data"][...] += scale * batch["deltas"]

    cls = type(
        "ScaledAdd",
        (ElementwiseVertex,),
        {
            "data": InOut(dtype),
            "deltas": Input(dtype),
            "scaleB": State(dtype, 1.0),
            "elements_field": "data",
            "op": ElementOp("SCALED_ADD", np.add, 2, 1.0, 2),
            "type_name": f"popops::ScaledAddSupervisor<{dtype.name},{dtype.name},true>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)
