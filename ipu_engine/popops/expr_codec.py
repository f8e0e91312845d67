"""popops expressions as data, for a serialized graph: the nodes in post-order, each a
list -- ``["_", index]`` a placeholder, ``["c", value]`` a constant, ``["u", op, a]``,
``["b", op, a, b]``, ``["s", a, b, cond]`` (operands are earlier nodes' positions), the
expression the last. Flat, so a deep expression is not a deep file."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.common.errors import GraphError
from ipu_engine.poplar.journal_codec import register_encoder
from ipu_engine.popops.expr import Binary, Const, Expr, Placeholder, Select, Unary


def encode_expr(expr: Expr) -> list[list[Any]]:
    """``expr`` as post-order nodes (a shared subexpression is written once)."""
    nodes: list[list[Any]] = []
    index: dict[int, int] = {}
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in index:
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(node.children()))
            continue
        kids = [index[id(c)] for c in node.children()]
        if isinstance(node, Placeholder):
            item: list[Any] = ["_", node.index]
        elif isinstance(node, Const):
            value = node.value.item() if isinstance(node.value, np.generic) else node.value
            item = ["c", value]
        elif isinstance(node, Unary):
            item = ["u", node.op.name, *kids]
        elif isinstance(node, Binary):
            item = ["b", node.op.name, *kids]
        elif isinstance(node, Select):
            item = ["s", *kids]
        else:
            raise GraphError(f"popops expression node {type(node).__name__} cannot be encoded")
        index[id(node)] = len(nodes)
        nodes.append(item)
    return nodes


def decode_expr(nodes: Any) -> Expr:
    """The expression ``encode_expr`` wrote; a malformed list is a ``GraphError``."""
    if not isinstance(nodes, list) or not nodes:
        raise GraphError("an encoded expression must be a non-empty list of nodes")
    made: list[Expr] = []
    for i, item in enumerate(nodes):
        if not isinstance(item, list) or not item:
            raise GraphError(f"expression node {i} is not a list")
        tag, rest = item[0], item[1:]

        def operand(k: Any, i: int = i) -> Expr:
            if not isinstance(k, int) or not 0 <= k < i:
                raise GraphError(f"expression node {i} names operand {k!r}, not an earlier node")
            return made[k]

        if tag == "_" and len(rest) == 1:
            made.append(Placeholder(rest[0]))
        elif tag == "c" and len(rest) == 1:
            made.append(Const(rest[0]))
        elif tag == "u" and len(rest) == 2:
            made.append(Unary(rest[0], operand(rest[1])))
        elif tag == "b" and len(rest) == 3:
            made.append(Binary(rest[0], operand(rest[1]), operand(rest[2])))
        elif tag == "s" and len(rest) == 3:
            made.append(Select(operand(rest[0]), operand(rest[1]), operand(rest[2])))
        else:
            raise GraphError(f"expression node {i} is not a node: {item!r:.80}")
    return made[-1]


register_encoder(Expr, "expr", encode_expr)
