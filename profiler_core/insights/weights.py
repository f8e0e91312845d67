"""The float32 weights each operation reads: always-live (or constant) float32 variables
whose shape is an operand an op call recorded -- a convolution's weights and bias, a
matmul's or grouped matmul's A and B, a gather's table.

The report keeps no vertex edges, so a read is found by shape: each op call, in the order
the program made them, takes the first weight not yet taken whose shape is its operand's
(or, for a matrix, the transposed shape, as ``x @ W.T`` reads ``W``). Weights of one shape
are interchangeable in bytes, so the bytes per op are exact even where two same-shaped
weights are paired the other way round; a weight read by two ops is counted once, by the
first. Activations are not always-live, so they are never taken for weights.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.debug_groups import outermost_op_calls
from profiler_core.model.kinds import ELEMENT_TYPES
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.unique import sorted_unique

READ_OPERANDS: dict[str, tuple[str, ...]] = {
    "poplin::convolution": ("weights",),
    "poplin::matMul": ("A", "B"),
    "poplin::matMulGrouped": ("A", "B"),
    "popops::gather": ("data",),
}
"""The operands each op call records (as shapes in its debug arguments) that it reads."""

FLOAT = ELEMENT_TYPES.index("float")
MAX_CALLS = 100_000  # op calls looked at; a larger program's rest is not paired


@dataclass(frozen=True)
class WeightReads:
    """One row per weight taken: the op call reading it, the outermost op call above that
    (an ONNX node, a framework layer, else the call itself), the variable and its bytes."""

    call: np.ndarray  # int64 debug context of the library op call (poplin::convolution)
    operation: np.ndarray  # int64 debug context of the operation the user wrote
    var: np.ndarray  # int64
    bytes: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.var)

    @property
    def total_bytes(self) -> int:
        return int(self.bytes.sum())

    def per_operation(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(operation context, bytes, weights) per operation, the most bytes first (ties:
        the operation made first)."""
        ops, inverse = np.unique(self.operation, return_inverse=True)
        size = np.bincount(inverse, weights=self.bytes, minlength=len(ops)).astype(np.int64)
        count = np.bincount(inverse, minlength=len(ops)).astype(np.int64)
        order = np.lexsort((ops, -size))
        return ops[order], size[order], count[order]


def _reading_calls(debug: Any) -> list[int]:
    """Contexts of the op calls in ``READ_OPERANDS``, in the order they were made (their
    API is their op); found from the distinct string ids when the columns are lazy."""
    ops, apis = debug.op, debug.api
    if isinstance(ops, StringColumn) and isinstance(apis, StringColumn) and ops.table is apis.table:
        used = sorted_unique(ops.ids).tolist()  # the few distinct ops, not every name
        wanted = [i for i in used if ops.table[i] in READ_OPERANDS]
        rows = np.flatnonzero(np.isin(ops.ids, wanted) & (ops.ids == apis.ids))
    else:
        rows = np.array(
            [i for i, (o, a) in enumerate(zip(ops, apis, strict=True)) if o in READ_OPERANDS]
        )
        rows = rows[[ops[i] == apis[i] for i in rows.tolist()]] if rows.size else rows
    return rows[:MAX_CALLS].astype(np.int64).tolist()


def _operand_shapes(op: str, args: Any) -> list[tuple[int, ...]]:
    """The shapes an ``op`` call with debug arguments ``args`` reads (a convolution with
    a bias reads a vector of its output channels too)."""
    if not isinstance(args, dict):
        return []
    shapes = []
    for operand in READ_OPERANDS[op]:
        dims = args.get(operand)
        if isinstance(dims, list) and dims and all(isinstance(d, int) for d in dims):
            shapes.append(tuple(dims))
    if op == "poplin::convolution" and args.get("bias") is True and shapes:
        shapes.append((shapes[0][-1],))  # bias [F], one per output channel of [KH,KW,C,F]
    return shapes


def _weights_by_shape(graph: Any) -> dict[tuple[int, ...], deque[int]]:
    """Always-live or constant float32 variables by shape, in the order they were made."""
    kept = np.asarray(graph.var_always_live, dtype=bool) | np.asarray(
        graph.var_is_constant, dtype=bool
    )
    candidates = np.flatnonzero(kept & (np.asarray(graph.var_type) == FLOAT))
    by_shape: dict[tuple[int, ...], deque[int]] = {}
    for var in candidates.tolist():
        by_shape.setdefault(graph.shape_of(var), deque()).append(var)
    return by_shape


def _take(by_shape: dict[tuple[int, ...], deque[int]], shape: tuple[int, ...]) -> int:
    for wanted in (shape, shape[::-1]) if len(shape) == 2 else (shape,):
        free = by_shape.get(wanted)
        if free:
            return free.popleft()
    return -1


def weight_reads(graph: Any, debug: Any) -> WeightReads:
    """Every float32 weight an op call reads, paired as the module says."""
    empty = np.zeros(0, dtype=np.int64)
    if debug is None or not len(debug.parent):
        return WeightReads(empty, empty, empty, empty)
    by_shape = _weights_by_shape(graph)
    calls, variables = [], []
    for call in _reading_calls(debug) if by_shape else []:
        op = debug.op[call]
        for shape in _operand_shapes(op, debug.args[call]):
            var = _take(by_shape, shape)
            if var >= 0:
                calls.append(call)
                variables.append(var)
    call = np.array(calls, dtype=np.int64)
    var = np.array(variables, dtype=np.int64)
    return WeightReads(
        call=call,
        operation=outermost_op_calls(debug, call),
        var=var,
        bytes=np.asarray(graph.var_bytes, dtype=np.int64)[var],
    )
