"""Weights made in the layout of the op that reads them, as PopART creates an ONNX
initializer with its consumer's create function (``poplin::createMatMulInputRHS``) rather
than spreading it linearly: the product then reads each block where it lives, and no
received copy of the weight is made (VGG-19's FC6 weight is 411 MB; a copy of it does not
fit beside it on one IPU)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from ipu_engine import poplin
from ipu_engine.frontend.available_memory import poplin_options
from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.poplar.debug import name_scope
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.virtual_graph import on_ipu


def matmul_options(node: Node) -> dict[str, object]:
    """The poplin options of a traced matmul: its partials type and memory proportion."""
    options: dict[str, object] = {"partialsType": node.attrs.get("partials_type", "float")}
    return options | (poplin_options(node) or {})


def weight_readers(trace: Trace) -> dict[int, Node]:
    """Each weight that a matmul on its own shard reads as its right operand: the first such
    matmul, whose plan its layout follows (only when the trace asks for op layouts)."""
    if not trace.weights_in_op_layout:
        return {}
    readers: dict[int, Node] = {}
    for node in trace.nodes:
        if node.op != "matmul":
            continue
        rhs = node.inputs[1]
        if rhs.op == "param" and rhs.shard == node.shard and rhs.id not in readers:
            readers[rhs.id] = node
    return readers


def create_weight(
    graph: Graph, weight: Node, readers: Mapping[int, Node], ipu: int, name: str
) -> Tensor | None:
    """``weight``'s tensor on ``ipu``, made for the op reading it; None when no op has a
    layout of its own for it (the caller spreads it linearly)."""
    reader = readers.get(weight.id)
    if reader is None:
        return None
    with contextlib.ExitStack() as scopes:
        for scope in reader.scope:  # made by its reader: named and layered as its op
            scopes.enter_context(name_scope(scope))
        scopes.enter_context(on_ipu(graph, ipu))
        return poplin.create_mat_mul_input_rhs(
            graph, weight.type, reader.inputs[0].shape, weight.shape, name, matmul_options(reader)
        )
