"""Expressions for ``popops.map``: ``_1 + _2 * 2`` built with Python operators.

As PopLibs' ``popops::expr``: placeholders ``_1``..``_6`` stand for the tensors passed
to ``map``; an expression is evaluated on whole numpy arrays at once and knows its cost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.codelets.ops_table import BINARY_OPS, UNARY_OPS
from ipu_engine.common.arguments import host_values, integer_arg, kind_error
from ipu_engine.common.errors import ArgumentError, GraphError
from ipu_engine.common.types import Type

#: Deepest expression ``map`` takes: evaluating and naming one recurses once per level.
MAX_EXPR_DEPTH = 200
#: Most nodes an expression may have, a subexpression counted at every place it is used
#: (``e = e + e`` ten times over is 2**10 nodes): its text and evaluation grow with this.
MAX_EXPR_NODES = 10_000


class Expr:
    """A node of an element-wise expression."""

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        raise NotImplementedError

    def evaluate_into(self, inputs: list[np.ndarray], dtype: np.dtype, out: np.ndarray) -> None:
        """``out[...] = self.evaluate(inputs, dtype)``; an op at the top whose result has
        ``out``'s type and shape computes straight into it (one pass over memory, not two)."""
        out[...] = self.evaluate(inputs, dtype)

    def text(self) -> str:
        raise NotImplementedError

    def placeholders(self) -> set[int]:
        return set()

    def children(self) -> tuple[Any, ...]:
        """The operands of this node."""
        return ()

    def cost(self) -> tuple[float, int]:
        """(cycles per element, FLOPs per element) on one worker."""
        return (0.0, 0)

    def bool_result(self) -> bool:
        return False

    def __repr__(self) -> str:
        return self.text()

    # Python operators build expressions
    def __add__(self, o: Any) -> Expr:
        return Binary("ADD", self, _wrap(o))

    def __radd__(self, o: Any) -> Expr:
        return Binary("ADD", _wrap(o), self)

    def __sub__(self, o: Any) -> Expr:
        return Binary("SUBTRACT", self, _wrap(o))

    def __rsub__(self, o: Any) -> Expr:
        return Binary("SUBTRACT", _wrap(o), self)

    def __mul__(self, o: Any) -> Expr:
        return Binary("MULTIPLY", self, _wrap(o))

    def __rmul__(self, o: Any) -> Expr:
        return Binary("MULTIPLY", _wrap(o), self)

    def __truediv__(self, o: Any) -> Expr:
        return Binary("DIVIDE", self, _wrap(o))

    def __rtruediv__(self, o: Any) -> Expr:
        return Binary("DIVIDE", _wrap(o), self)

    def __pow__(self, o: Any) -> Expr:
        return Binary("POWER", self, _wrap(o))

    def __neg__(self) -> Expr:
        return Unary("NEGATE", self)

    def __abs__(self) -> Expr:
        return Unary("ABSOLUTE", self)

    def __lt__(self, o: Any) -> Expr:
        return Binary("LESS_THAN", self, _wrap(o))

    def __le__(self, o: Any) -> Expr:
        return Binary("LESS_THAN_EQUAL", self, _wrap(o))

    def __gt__(self, o: Any) -> Expr:
        return Binary("GREATER_THAN", self, _wrap(o))

    def __ge__(self, o: Any) -> Expr:
        return Binary("GREATER_THAN_EQUAL", self, _wrap(o))


class Placeholder(Expr):
    def __init__(self, index: int) -> None:
        index = integer_arg(index, "popops.expr.Placeholder: the index", ArgumentError)
        if index < 1:
            raise GraphError(f"popops.expr.Placeholder: placeholders count from _1, got {index}")
        self.index = index

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        return inputs[self.index - 1]

    def text(self) -> str:
        return f"_{self.index}"

    def placeholders(self) -> set[int]:
        return {self.index}


class Const(Expr):
    def __init__(self, value: float | int | bool) -> None:
        if not isinstance(value, bool | int | float | np.bool_ | np.integer | np.floating):
            raise ArgumentError(kind_error("popops.expr.Const: the value", "a number", value))
        self.value = value

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        return np.asarray(self.value, dtype=dtype)

    def text(self) -> str:
        return repr(self.value)


class Unary(Expr):
    def __init__(self, op: str, arg: Expr) -> None:
        self.op = _op(UNARY_OPS, op, "Unary")
        self.arg = arg

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        x = np.asarray(self.arg.evaluate(inputs, dtype))
        out = np.empty(x.shape, dtype=bool if self.op.bool_result else x.dtype)
        return self.op.fn(x, out=out)

    def evaluate_into(self, inputs: list[np.ndarray], dtype: np.dtype, out: np.ndarray) -> None:
        x = np.asarray(self.arg.evaluate(inputs, dtype))
        result = np.dtype(bool) if self.op.bool_result else x.dtype
        if out.dtype == result and out.shape == x.shape:
            self.op.fn(x, out=out)
        else:
            out[...] = self.op.fn(x, out=np.empty(x.shape, dtype=result))

    def text(self) -> str:
        return f"{self.op.name.lower()}({self.arg.text()})"

    def placeholders(self) -> set[int]:
        return self.arg.placeholders()

    def children(self) -> tuple[Any, ...]:
        return (self.arg,)

    def cost(self) -> tuple[float, int]:
        c, f = self.arg.cost()
        return (c + self.op.cycles_per_element, f + self.op.flops_per_element)

    def bool_result(self) -> bool:
        return self.op.bool_result


class Binary(Expr):
    def __init__(self, op: str, lhs: Expr, rhs: Expr) -> None:
        self.op = _op(BINARY_OPS, op, "Binary")
        self.lhs, self.rhs = lhs, rhs

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        a = np.asarray(self.lhs.evaluate(inputs, dtype))
        b = np.asarray(self.rhs.evaluate(inputs, dtype))
        shape = np.broadcast_shapes(a.shape, b.shape)
        out = np.empty(shape, dtype=bool if self.op.bool_result else np.result_type(a, b))
        return self.op.fn(a, b, out=out)

    def evaluate_into(self, inputs: list[np.ndarray], dtype: np.dtype, out: np.ndarray) -> None:
        a = np.asarray(self.lhs.evaluate(inputs, dtype))
        b = np.asarray(self.rhs.evaluate(inputs, dtype))
        shape = np.broadcast_shapes(a.shape, b.shape)
        result = np.dtype(bool) if self.op.bool_result else np.result_type(a, b)
        if out.dtype == result and out.shape == shape:
            self.op.fn(a, b, out=out)  # numpy copies an operand first where they overlap
        else:
            out[...] = self.op.fn(a, b, out=np.empty(shape, dtype=result))

    def text(self) -> str:
        symbols = {"ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "DIVIDE": "/"}
        if self.op.name in symbols:
            return f"({self.lhs.text()} {symbols[self.op.name]} {self.rhs.text()})"
        return f"{self.op.name.lower()}({self.lhs.text()}, {self.rhs.text()})"

    def placeholders(self) -> set[int]:
        return self.lhs.placeholders() | self.rhs.placeholders()

    def children(self) -> tuple[Any, ...]:
        return (self.lhs, self.rhs)

    def cost(self) -> tuple[float, int]:
        (c1, f1), (c2, f2) = self.lhs.cost(), self.rhs.cost()
        return (c1 + c2 + self.op.cycles_per_element, f1 + f2 + self.op.flops_per_element)

    def bool_result(self) -> bool:
        return self.op.bool_result


class Select(Expr):
    """``select(a, b, cond)``: a where cond is true, else b (PopLibs' TernaryOp SELECT)."""

    def __init__(self, a: Expr, b: Expr, cond: Expr) -> None:
        self.a, self.b, self.cond = a, b, cond

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray:
        a = np.asarray(self.a.evaluate(inputs, dtype))
        return np.where(
            self.cond.evaluate(inputs, dtype), a, self.b.evaluate(inputs, dtype)
        ).astype(a.dtype)

    def text(self) -> str:
        return f"select({self.a.text()}, {self.b.text()}, {self.cond.text()})"

    def placeholders(self) -> set[int]:
        return self.a.placeholders() | self.b.placeholders() | self.cond.placeholders()

    def children(self) -> tuple[Any, ...]:
        return (self.a, self.b, self.cond)

    def cost(self) -> tuple[float, int]:
        parts = [self.a.cost(), self.b.cost(), self.cond.cost()]
        return (sum(c for c, _ in parts) + 1.0, sum(f for _, f in parts))


def _op(table: dict[str, Any], op: Any, node: str) -> Any:
    if not isinstance(op, str) or op not in table:
        raise GraphError(
            f"popops.expr.{node}: unknown operation {op!r}; use one of {', '.join(table)}"
        )
    return table[op]


def _wrap(value: Any) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool | int | float | np.bool_ | np.integer | np.floating):
        return Const(value)
    raise ArgumentError(
        kind_error("popops.expr: an operand", "a number or an expression such as _1", value)
    )


def check_expression(expr: Expr, api: str, elem_type: Type | None) -> None:
    """Refuse, before anything walks ``expr`` recursively, an expression nested deeper than
    ``MAX_EXPR_DEPTH`` or larger than ``MAX_EXPR_NODES`` (a loop of ``e = e + 1`` run a
    million times, or ``e = e + e`` sixty times), an operand that is not an expression,
    and a constant ``elem_type`` cannot hold exactly (2.5 or NaN in an INT map)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, int, bool]] = [(expr, 1, False)]
    while stack:
        node, depth, expanded = stack.pop()
        if not isinstance(node, Expr):
            raise GraphError(kind_error(f"{api}: an operand of the expression", "an Expr", node))
        if depth > MAX_EXPR_DEPTH:
            raise GraphError(
                f"{api}: the expression is nested more than {MAX_EXPR_DEPTH} deep "
                "(ipu_engine.popops.expr.MAX_EXPR_DEPTH); split it into several maps"
            )
        key = id(node)
        if expanded:
            sizes[key] = min(1 + sum(sizes[id(c)] for c in node.children()), MAX_EXPR_NODES + 1)
            if sizes[key] > MAX_EXPR_NODES:
                raise GraphError(
                    f"{api}: the expression has more than {MAX_EXPR_NODES} nodes, counting a "
                    "shared subexpression at each use (ipu_engine.popops.expr.MAX_EXPR_NODES); "
                    "split it into several maps"
                )
            continue
        if key in sizes:
            continue
        if isinstance(node, Const) and elem_type is not None:
            host_values(node.value, elem_type, f"{api}: the constant {node.value!r}", GraphError)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in node.children())


_1, _2, _3, _4, _5, _6 = (Placeholder(i) for i in range(1, 7))


def _unary(op: str):
    return lambda x: Unary(op, _wrap(x))


exp = _unary("EXPONENT")
log = _unary("LOGARITHM")
sqrt = _unary("SQRT")
rsqrt = _unary("RSQRT")
tanh = _unary("TANH")
sigmoid = _unary("SIGMOID")
relu = _unary("RELU")
square = _unary("SQUARE")
neg = _unary("NEGATE")
abs_ = _unary("ABSOLUTE")
inv = _unary("INVERSE")
logical_not = _unary("LOGICAL_NOT")


def max_(a: Any, b: Any) -> Expr:
    return Binary("MAXIMUM", _wrap(a), _wrap(b))


def min_(a: Any, b: Any) -> Expr:
    return Binary("MINIMUM", _wrap(a), _wrap(b))


def select(a: Any, b: Any, cond: Any) -> Expr:
    return Select(_wrap(a), _wrap(b), _wrap(cond))
