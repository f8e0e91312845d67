"""``popops.select(graph, cond, a, b, prog)``: ``a`` where ``cond`` is non-zero, else ``b``
(ONNX Where; PopLibs' ``select``, a TernaryOp). The fused ``map`` codelet of
``expr.select(_1, _2, _3)`` does the work; only its operand types differ from ``map``'s
(a bool or integer condition beside float operands), so this op checks them itself."""

from __future__ import annotations

from ipu_engine.codelets.map_expr import map_codelet
from ipu_engine.common.errors import TypeMismatchError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.popops.expr import _1, _2, _3
from ipu_engine.popops.expr import select as select_expr
from ipu_engine.popops.map import _add_vertices
from ipu_engine.poputil.library_op import broadcast_shape, check_tensors, op_context, output_like

_EXPR = select_expr(_1, _2, _3)


def select(
    graph: Graph,
    cond: Tensor,
    a: Tensor,
    b: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
) -> Tensor:
    """A new tensor of ``a``'s type: ``a`` where ``cond`` (BOOL or an integer type, 0 is
    false) holds, else ``b``; the three broadcast with numpy's rules."""
    api = "popops::select"
    check_tensors(graph, api, cond, a, b)
    if a.type != b.type:
        raise TypeMismatchError(f"{api}: {a.name!r} is {a.type!r} but {b.name!r} is {b.type!r}")
    if cond.type.numpy_dtype.kind not in "biu":
        raise TypeMismatchError(
            f"{api}: the condition {cond.name!r} must be BOOL or an integer type, not "
            f"{cond.type!r}; compare it first (popops.neq(graph, cond, zero, prog))"
        )
    shape = broadcast_shape(api, [a, b, cond])
    tensors = [a, b, cond]
    with op_context(graph, api, debug_prefix, {"shape": list(shape)}) as debug_id:
        codelet = map_codelet(_EXPR, (a.type, b.type, cond.type))
        out = output_like(graph, debug_prefix or "select", a.type, shape, tensors)
        _add_vertices(graph, codelet, tensors, out, shape, prog, debug_id)
    return out
