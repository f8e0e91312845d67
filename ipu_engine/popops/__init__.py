"""PopLibs' popops: element-wise operations, ``map`` over expressions, reductions.

Every op takes ``(graph, tensors..., prog, debug_prefix="")``, builds its compute
sets across the tiles holding the data and appends their Execute programs to ``prog``.
"""

from __future__ import annotations

from ipu_engine.poplar.journal import record_api
from ipu_engine.popops import expr
from ipu_engine.popops import expr_codec as _expr_codec  # noqa: F401 - registers its encoder
from ipu_engine.popops.elementwise import (
    binary,
    binary_in_place,
    cast,
    fill,
    scaled_add_to,
    unary,
    zero,
)
from ipu_engine.popops.gather import gather
from ipu_engine.popops.map import map, map_in_place
from ipu_engine.popops.reduce import reduce
from ipu_engine.popops.resample import resample
from ipu_engine.popops.scatter import scatter_elements, scatter_nd
from ipu_engine.popops.select import select


def _binary(op: str, doc: str):
    def fn(graph, a, b, prog, debug_prefix=""):  # noqa: ANN001
        return binary(graph, op, a, b, prog, debug_prefix)

    fn.__doc__ = doc
    return fn


def _binary_in_place(op: str):
    def fn(graph, a, b, prog, debug_prefix=""):  # noqa: ANN001
        return binary_in_place(graph, op, a, b, prog, debug_prefix)

    fn.__doc__ = f"``a = a {op.lower()} b`` in place."
    return fn


def _unary(op: str, doc: str):
    def fn(graph, a, prog, debug_prefix=""):  # noqa: ANN001
        return unary(graph, op, a, prog, debug_prefix)

    fn.__doc__ = doc
    return fn


add = _binary("ADD", "``a + b`` element-wise.")
sub = _binary("SUBTRACT", "``a - b`` element-wise.")
mul = _binary("MULTIPLY", "``a * b`` element-wise.")
div = _binary("DIVIDE", "``a / b`` element-wise (integers truncate toward zero, as C).")
max = _binary("MAXIMUM", "Element-wise maximum.")
min = _binary("MINIMUM", "Element-wise minimum.")
pow = _binary("POWER", "``a ** b`` element-wise.")
rem = _binary("REMAINDER", "C remainder of ``a / b``.")
eq = _binary("EQUAL", "``a == b`` as BOOL.")
neq = _binary("NOT_EQUAL", "``a != b`` as BOOL.")
lt = _binary("LESS_THAN", "``a < b`` as BOOL.")
lteq = _binary("LESS_THAN_EQUAL", "``a <= b`` as BOOL.")
gt = _binary("GREATER_THAN", "``a > b`` as BOOL.")
gteq = _binary("GREATER_THAN_EQUAL", "``a >= b`` as BOOL.")
logical_and = _binary("LOGICAL_AND", "Logical and of BOOL tensors.")
logical_or = _binary("LOGICAL_OR", "Logical or of BOOL tensors.")

add_in_place = _binary_in_place("ADD")
sub_in_place = _binary_in_place("SUBTRACT")
mul_in_place = _binary_in_place("MULTIPLY")
div_in_place = _binary_in_place("DIVIDE")

neg = _unary("NEGATE", "``-a`` element-wise.")
abs = _unary("ABSOLUTE", "``|a|`` element-wise.")
exp = _unary("EXPONENT", "``e**a`` element-wise.")
log = _unary("LOGARITHM", "Natural logarithm element-wise.")
sqrt = _unary("SQRT", "Square root element-wise.")
rsqrt = _unary("RSQRT", "``1/sqrt(a)`` element-wise.")
square = _unary("SQUARE", "``a*a`` element-wise.")
tanh = _unary("TANH", "Hyperbolic tangent element-wise.")
sigmoid = _unary("SIGMOID", "Logistic sigmoid element-wise.")
relu = _unary("RELU", "``max(a, 0)`` element-wise.")
inv = _unary("INVERSE", "``1/a`` element-wise.")
signum = _unary("SIGNUM", "Sign of each element.")
ceil = _unary("CEIL", "Ceiling element-wise.")
floor = _unary("FLOOR", "Floor element-wise.")
round = _unary("ROUND", "Round half to even element-wise.")
sin = _unary("SIN", "Sine element-wise.")
cos = _unary("COS", "Cosine element-wise.")
logical_not = _unary("LOGICAL_NOT", "Logical not of a BOOL tensor.")


__all__ = [
    "abs",
    "add",
    "add_in_place",
    "cast",
    "ceil",
    "cos",
    "div",
    "div_in_place",
    "eq",
    "exp",
    "expr",
    "fill",
    "floor",
    "gather",
    "gt",
    "gteq",
    "inv",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "lt",
    "lteq",
    "map",
    "map_in_place",
    "max",
    "min",
    "mul",
    "mul_in_place",
    "neg",
    "neq",
    "pow",
    "reduce",
    "relu",
    "rem",
    "resample",
    "round",
    "rsqrt",
    "scaled_add_to",
    "scatter_elements",
    "scatter_nd",
    "select",
    "sigmoid",
    "signum",
    "sin",
    "sqrt",
    "square",
    "sub",
    "sub_in_place",
    "tanh",
    "zero",
]

record_api(globals(), "popops", __all__)
