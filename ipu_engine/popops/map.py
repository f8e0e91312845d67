"""``popops.map``: evaluate an expression over tensors in one fused compute set."""

from __future__ import annotations

from collections.abc import Sequence

from ipu_engine.codelets.map_expr import map_codelet
from ipu_engine.common.arguments import sequence_arg
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.popops.expr import Expr, check_expression
from ipu_engine.poputil.library_op import (
    broadcast_shape,
    broadcast_to,
    check_tensors,
    execute_per_tile,
    op_context,
    output_like,
)


def _checked(graph: Graph, expr: Expr, tensors: Sequence[Tensor], api: str) -> tuple[int, ...]:
    if not isinstance(expr, Expr):
        raise GraphError(f"{api}: expected a popops.expr expression such as _1 + _2, got {expr!r}")
    tensors = sequence_arg(tensors, f"{api}: the tensors")
    check_tensors(graph, api, *tensors)
    check_expression(expr, api, tensors[0].type if tensors else None)
    used = expr.placeholders()
    if not used or max(used) > len(tensors):
        raise GraphError(
            f"{api}: expression {expr.text()} uses placeholders {sorted(used)} but "
            f"{len(tensors)} tensors were given"
        )
    types = {t.type for t in tensors}
    if len(types) > 1:
        listed = ", ".join(f"{t.name!r} {t.type!r}" for t in tensors)
        raise TypeMismatchError(f"{api}: tensors must share one element type: {listed}")
    return broadcast_shape(api, tensors)


def map(
    graph: Graph,
    expr: Expr,
    tensors: Sequence[Tensor],
    prog: SequenceProgram,
    debug_prefix: str = "",
) -> Tensor:
    """A new tensor holding ``expr`` applied element-wise to ``tensors``."""
    api = "popops::map"
    shape = _checked(graph, expr, tensors, api)
    with op_context(graph, api, debug_prefix, {"expr": expr.text()}) as debug_id:
        codelet = map_codelet(expr, tuple(t.type for t in tensors))
        out = output_like(graph, debug_prefix or "map", codelet.fields["out"].type, shape, tensors)
        _add_vertices(graph, codelet, tensors, out, shape, prog, debug_id)
    return out


def map_in_place(
    graph: Graph,
    expr: Expr,
    tensors: Sequence[Tensor],
    prog: SequenceProgram,
    debug_prefix: str = "",
) -> None:
    """``tensors[0] = expr(tensors...)`` in place."""
    api = "popops::mapInPlace"
    shape = _checked(graph, expr, tensors, api)
    target = tensors[0]
    if shape != target.shape:
        raise ShapeError(
            f"{api}: the result {shape} must have the shape of {target.name!r} {target.shape}"
        )
    if expr.bool_result():
        raise TypeMismatchError(f"{api}: {expr.text()} gives booleans and cannot run in place")
    with op_context(graph, api, debug_prefix, {"expr": expr.text()}) as debug_id:
        codelet = map_codelet(expr, tuple(t.type for t in tensors))
        _add_vertices(graph, codelet, tensors, target, shape, prog, debug_id)


def _add_vertices(graph, codelet, tensors, out, shape, prog, debug_id) -> None:  # noqa: ANN001
    edges = {f"in{i}": broadcast_to(t, shape) for i, t in enumerate(tensors)}
    execute_per_tile(graph, "map", codelet, out, {**edges, "out": out}, prog, debug_id)
