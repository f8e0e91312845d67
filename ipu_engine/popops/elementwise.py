"""popops element-wise operations: ``popops.add(graph, a, b, prog)`` and friends.

Each op makes one compute set with one vertex per tile of the output and appends its
Execute to ``prog``; operands broadcast with numpy's rules.
"""

from __future__ import annotations

from typing import Any

from ipu_engine.codelets import elementwise as codelets
from ipu_engine.codelets.ops_table import BINARY_OPS, UNARY_OPS
from ipu_engine.common.arguments import host_values, name_arg, number_arg
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.common.types import BOOL, Type, as_type
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poputil.library_op import (
    broadcast_shape,
    broadcast_to,
    check_tensors,
    execute_per_tile,
    op_context,
    output_like,
)


def _check_float(op_name: str, api: str, t: Tensor) -> None:
    if t.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(
            f"{api}: {op_name} needs float or half tensors; {t.name!r} is {t.type!r}"
        )


def binary(
    graph: Graph, op_name: str, a: Tensor, b: Tensor, prog: Sequence, debug_prefix: str = ""
) -> Tensor:
    """``out = a OP b`` element-wise, as a new tensor mapped like the operands."""
    api = f"popops::{op_name.lower()}"
    check_tensors(graph, api, a, b)
    if a.type != b.type:
        raise TypeMismatchError(f"{api}: {a.name!r} is {a.type!r} but {b.name!r} is {b.type!r}")
    op = BINARY_OPS[op_name]
    if op.float_only:
        _check_float(op_name, api, a)
    shape = broadcast_shape(api, [a, b])
    with op_context(graph, api, debug_prefix, {"shape": list(shape)}) as debug_id:
        out_type = BOOL if op.bool_result else a.type
        out = output_like(graph, debug_prefix or op_name.lower(), out_type, shape, [a, b])
        edges = {"in1": broadcast_to(a, shape), "in2": broadcast_to(b, shape), "out": out}
        execute_per_tile(
            graph, op_name.lower(), codelets.binary_op(op_name, a.type), out, edges, prog, debug_id
        )
    return out


def binary_in_place(
    graph: Graph, op_name: str, a: Tensor, b: Tensor, prog: Sequence, debug_prefix: str = ""
) -> None:
    """``a = a OP b`` in place (Poplar's ``addInPlace`` etc.)."""
    api = f"popops::{op_name.lower()}InPlace"
    check_tensors(graph, api, a, b)
    if a.type != b.type:
        raise TypeMismatchError(f"{api}: {a.name!r} is {a.type!r} but {b.name!r} is {b.type!r}")
    if BINARY_OPS[op_name].bool_result:
        raise TypeMismatchError(f"{api}: {op_name} gives booleans and cannot run in place")
    shape = broadcast_shape(api, [a, b])
    if shape != a.shape:
        raise ShapeError(f"{api}: {b.name!r} {b.shape} must broadcast to {a.name!r} {a.shape}")
    with op_context(graph, api, debug_prefix) as debug_id:
        codelet = codelets.binary_op(op_name, a.type, in_place=True)
        edges = {"in1Out": a, "in2": broadcast_to(b, shape)}
        execute_per_tile(graph, f"{op_name.lower()}InPlace", codelet, a, edges, prog, debug_id)


def unary(graph: Graph, op_name: str, a: Tensor, prog: Sequence, debug_prefix: str = "") -> Tensor:
    api = f"popops::{op_name.lower()}"
    check_tensors(graph, api, a)
    op = UNARY_OPS[op_name]
    if op.float_only:
        _check_float(op_name, api, a)
    with op_context(graph, api, debug_prefix) as debug_id:
        out = output_like(
            graph, debug_prefix or op_name.lower(), BOOL if op.bool_result else a.type, a.shape, [a]
        )
        codelet = codelets.unary_op(op_name, a.type)
        execute_per_tile(
            graph, op_name.lower(), codelet, out, {"in": a, "out": out}, prog, debug_id
        )
    return out


def unary_in_place(
    graph: Graph, op_name: str, a: Tensor, prog: Sequence, debug_prefix: str = ""
) -> None:
    api = f"popops::{op_name.lower()}InPlace"
    check_tensors(graph, api, a)
    op = UNARY_OPS[op_name]
    if op.float_only:
        _check_float(op_name, api, a)
    with op_context(graph, api, debug_prefix) as debug_id:
        codelet = codelets.unary_op(op_name, a.type, in_place=True)
        execute_per_tile(
            graph, f"{op_name.lower()}InPlace", codelet, a, {"inOut": a}, prog, debug_id
        )


def cast(graph: Graph, a: Tensor, dtype: Any, prog: Sequence, debug_prefix: str = "") -> Tensor:
    """A copy of ``a`` converted to ``dtype`` (numpy's conversion rules)."""
    check_tensors(graph, "popops::cast", a)
    dst: Type = as_type(dtype)
    with op_context(graph, "popops::cast", debug_prefix) as debug_id:
        out = output_like(graph, debug_prefix or "cast", dst, a.shape, [a])
        codelet = codelets.cast(a.type, dst)
        execute_per_tile(graph, "cast", codelet, out, {"src": a, "out": out}, prog, debug_id)
    return out


def fill(graph: Graph, t: Tensor, value: float, prog: Sequence, debug_prefix: str = "") -> None:
    """Set every element of ``t`` to ``value``: a number ``t``'s type holds exactly (2.5 or
    NaN into an INT tensor is refused, not stored as 2 or garbage)."""
    check_tensors(graph, "popops::fill", t)
    values = host_values(value, t.type, "popops::fill: the value", GraphError)
    if values.size != 1:
        raise ShapeError(f"popops::fill: the value must be one number, got {values.size}")
    with op_context(graph, "popops::fill", debug_prefix) as debug_id:
        execute_per_tile(
            graph, "fill", codelets.fill(t.type), t, {"out": t}, prog, debug_id, {"value": value}
        )


def zero(graph: Graph, t: Tensor, prog: Sequence, debug_prefix: str = "") -> None:
    name_arg(debug_prefix, "popops::zero: the debug prefix")
    fill(graph, t, 0, prog, debug_prefix or "zero")


def scaled_add_to(
    graph: Graph, a: Tensor, b: Tensor, scale: float, prog: Sequence, debug_prefix: str = ""
) -> None:
    """``a += scale * b`` in place (PopLibs' ``scaledAddTo``, the SGD weight update)."""
    check_tensors(graph, "popops::scaledAddTo", a, b)
    number_arg(scale, "popops::scaledAddTo: the scale")
    if a.shape != b.shape:
        raise ShapeError(
            f"popops::scaledAddTo: {a.name!r} {a.shape} and {b.name!r} {b.shape} differ"
        )
    if a.type != b.type:
        raise TypeMismatchError(
            f"popops::scaledAddTo: {a.name!r} is {a.type!r}, {b.name!r} is {b.type!r}"
        )
    host_values(scale, a.type, f"popops::scaledAddTo: the scale of {a.name!r}", GraphError)
    with op_context(graph, "popops::scaledAddTo", debug_prefix) as debug_id:
        edges, state = {"data": a, "deltas": b}, {"scaleB": scale}
        codelet = codelets.scaled_add(a.type)
        execute_per_tile(graph, "scaledAdd", codelet, a, edges, prog, debug_id, state)
