"""The multi-slice codelet (PopLibs' ``MultiSlice``): one tile's part of a gather. A
vertex holds some rows and columns of the sliced tensor and, for each index it is given,
copies that row's columns when the row is one of its own; other outputs get -0.0 (0 for
integers), so that summing the partials of every row block is exact."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.common.types import UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = ("baseOffset", "baseRows", "rowLength", "numIndices", "sliceSize")


class MultiSliceVertex(Vertex):
    supervisor = True
    code_bytes = 700

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        # each index is checked against the vertex's rows; a row is copied 64 bits a cycle
        n = sizes.state("numIndices").astype(np.float64)
        return SUPERVISOR_OVERHEAD_CYCLES + n * 4.0 + sizes.elements("out") * 0.5


def _gather(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    if starts.size > 1 and np.all(np.diff(starts) == size):
        first = int(starts[0])
        return values[first : first + size * starts.size].reshape(starts.size, size)
    return values[starts[:, None] + np.arange(size)]


@functools.cache
def multi_slice(dtype: Type, index_type: Type) -> type[Vertex]:
    empty = -0.0 if dtype.numpy_dtype.kind == "f" else 0

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        table = np.stack([batch.state(k).astype(np.int64) for k in _STATE], axis=1)
        offset = table[:, 0]
        unique, inverse = np.unique(table[:, 1:], axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        starts = {f: batch.offsets(f)[:-1] for f in ("base", "offsets", "out")}
        base_all, out = batch["base"], batch["out"]
        indices_all = batch["offsets"].astype(np.int64)
        for u, (rows, length, count, size) in enumerate(unique.tolist()):
            sel = np.flatnonzero(inverse == u)
            index = _gather(indices_all, starts["offsets"][sel], count)
            bad = (index < -size) | (index >= size)
            if bad.any():
                raise IndexError(
                    f"popops::gather: index {int(index[bad][0])} is out of range for a "
                    f"dimension of {size} (valid: {-size} to {size - 1})"
                )
            local = np.where(index < 0, index + size, index) - offset[sel, None]
            mine = (local >= 0) & (local < rows)
            base = _gather(base_all, starts["base"][sel], rows * length)
            base = base.reshape(sel.size, rows, length)
            picked = np.take_along_axis(base, np.clip(local, 0, rows - 1)[:, :, None], axis=1)
            values = np.where(mine[:, :, None], picked, np.asarray(empty, dtype=picked.dtype))
            out[starts["out"][sel, None] + np.arange(count * length)] = values.reshape(sel.size, -1)

    attrs = {
        "base": Input(dtype),
        "offsets": Input(index_type),
        "out": Output(dtype),
        "type_name": f"popops::MultiSlice<{dtype.name},{index_type.name}>",
        "compute_batch": classmethod(compute_batch),
    }
    attrs.update({k: State(UNSIGNED_INT, 0) for k in _STATE})
    return register_builtin(type("MultiSlice", (MultiSliceVertex,), attrs))
