"""The multi-update codelet (PopLibs' ``MultiUpdate`` / ``MultiUpdateOp``): one tile's part of
a scatter. A vertex holds a block of the output -- some rows of the data seen as [rows,
columns] and some of their columns -- copies the data's block into it and, for each index
tuple it is given, writes (or adds, multiplies, maxes, mins) that update's columns into the
row the tuple names when the row is one of its own.

Index tuples have ``indexDepth`` parts, each within its dimension of ``dims`` (negative
parts count back, as ONNX); a part out of range stops the run naming it, never clamped.
Every vertex of a compute set runs in one pass of numpy calls, whatever their sizes.
"""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.common.types import UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = ("rowOffset", "rows", "columns", "numIndices", "indexDepth", "totalRows")

#: reduction -> (PopLibs' operation, numpy ufunc applying repeated updates in order, cycles
#: per updated element: a 64-bit store for a plain update, a load, op and store otherwise)
REDUCTIONS = {
    "none": ("", None, 0.5),
    "add": ("ADD", np.add, 1.0),
    "mul": ("MULTIPLY", np.multiply, 1.0),
    "max": ("MAX", np.maximum, 1.0),
    "min": ("MIN", np.minimum, 1.0),
}


class MultiUpdateVertex(Vertex):
    supervisor = True
    code_bytes = 900
    cycles_per_update = 0.5

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        # each index tuple is checked and flattened (4 cycles and 2 a part); the block is
        # copied 64 bits a cycle; the updates are spread evenly over the row blocks (where
        # they land is known only at run time)
        n = sizes.state("numIndices").astype(np.float64)
        depth = sizes.state("indexDepth").astype(np.float64)
        share = sizes.state("rows") / np.maximum(sizes.state("totalRows"), 1)
        updated = n * sizes.state("columns") * share
        return (
            SUPERVISOR_OVERHEAD_CYCLES
            + n * (4.0 + 2.0 * depth)
            + sizes.elements("out") * 0.5
            + updated * cls.cycles_per_update
        )


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated ranges ``start + arange(length)`` of each (start, length)."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    first = np.repeat(starts - (ends - lengths), lengths)
    return first + np.arange(total, dtype=np.int64)


def _rows_named(batch: VertexBatch, vertex: np.ndarray) -> np.ndarray:
    """The flat data row each index tuple names (negative parts counted back), checked."""
    depth = batch.state("indexDepth").astype(np.int64)[vertex]
    parts = batch["indices"].astype(np.int64)
    dims = batch["dims"].astype(np.int64)
    dim_first = batch.offsets("dims")[:-1]
    index_first = batch.offsets("indices")[:-1]
    tuple_in_vertex = np.arange(vertex.size) - np.searchsorted(vertex, vertex, side="left")
    rows = np.zeros(vertex.size, dtype=np.int64)
    for k in range(int(depth.max(initial=0))):
        has = depth > k
        v = vertex[has]
        part = parts[index_first[v] + tuple_in_vertex[has] * depth[has] + k]
        size = dims[dim_first[v] + k]
        bad = (part < -size) | (part >= size)
        if bad.any():
            raise IndexError(
                f"popops::multiUpdate: index {int(part[bad][0])} is out of range for a "
                f"dimension of {int(size[bad][0])} (valid: {-int(size[bad][0])} to "
                f"{int(size[bad][0]) - 1})"
            )
        rows[has] = rows[has] * size + np.where(part < 0, part + size, part)
    return rows


@functools.cache
def multi_update(dtype: Type, index_type: Type, reduction: str) -> type[Vertex]:
    """The scatter vertex for ``dtype`` data, ``index_type`` indices and ``reduction``."""
    operation, ufunc, cycles = REDUCTIONS[reduction]
    name = "MultiUpdateOp" if operation else "MultiUpdate"
    template = f"{dtype.name},{index_type.name}" + (f",{operation}" if operation else "")

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        out = batch.output("out")
        out[...] = batch["data"]
        count = batch.state("numIndices").astype(np.int64)
        vertex = np.repeat(np.arange(batch.count), count)
        if vertex.size == 0:
            return
        local = _rows_named(batch, vertex) - batch.state("rowOffset").astype(np.int64)[vertex]
        hit = (local >= 0) & (local < batch.state("rows").astype(np.int64)[vertex])
        columns = batch.state("columns").astype(np.int64)
        v = vertex[hit]
        tuple_in_vertex = (np.arange(vertex.size) - np.searchsorted(vertex, vertex))[hit]
        width = columns[v]
        target = _spans(batch.offsets("out")[:-1][v] + local[hit] * width, width)
        source = _spans(batch.offsets("updates")[:-1][v] + tuple_in_vertex * width, width)
        values = batch["updates"][source]
        if ufunc is None:
            out[target] = values  # repeated rows: the last update wins, in index order
        else:
            ufunc.at(out, target, values)

    attrs = {
        "data": Input(dtype),
        "indices": Input(index_type),
        "dims": Input(UNSIGNED_INT),
        "updates": Input(dtype),
        "out": Output(dtype),
        "cycles_per_update": cycles,
        "type_name": f"popops::{name}<{template}>",
        "compute_batch": classmethod(compute_batch),
    }
    attrs.update({k: State(UNSIGNED_INT, 0) for k in _STATE})
    return register_builtin(type(name, (MultiUpdateVertex,), attrs))
