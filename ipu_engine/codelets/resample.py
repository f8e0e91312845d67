"""The resampling codelet: one tile's block of a resize along one dimension. Each output row
is a weighted sum of a few input rows (its taps: 1 for nearest, 2 for linear, 4 for cubic,
more when antialiasing), plus a fill (the extrapolation value of rows outside a crop). A
vertex holds some output rows and columns and reads the input rows its taps span; taps and
weights are per output row, constants laid out with the vertex. Vertices of equal sizes run
as one batched numpy call."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets.alike_edges import alike_vertices
from ipu_engine.common.types import UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = ("outRows", "inRows", "columns", "taps")


class ResampleVertex(Vertex):
    supervisor = True
    code_bytes = 600

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        # a multiply-accumulate per tap and output element, two a cycle (float2 over the
        # six workers, as popops' element-wise adds); a tap's row and weight loaded per
        # output row, and the fill added
        taps = sizes.state("taps").astype(np.float64)
        out = sizes.elements("out").astype(np.float64)
        return (
            SUPERVISOR_OVERHEAD_CYCLES + out * (taps + 1) * 0.5 + sizes.state("outRows") * taps * 2
        )

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return (sizes.elements("out") * sizes.state("taps") * 2).astype(np.int64)


def _gather(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    return values[starts[:, None] + np.arange(size)]


@functools.cache
def resample(dtype: Type) -> type[Vertex]:
    """Resampling of ``dtype`` rows (half computes in float, as the AMP's partials; integer
    rows, nearest only, in double so that every int32 is exact)."""
    work = np.float64 if dtype.numpy_dtype.kind in "iu" else np.float32

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        x_all, out = batch["in"], batch.output("out")
        first = {f: batch.offsets(f)[:-1] for f in ("in", "out", "rows", "weights", "fill")}
        rows_all, weights_all, fill_all = batch["rows"], batch["weights"], batch["fill"]
        for g, sel in alike_vertices(batch, _STATE):
            n, m, c, t = g["outRows"], g["inRows"], g["columns"], g["taps"]
            x = _gather(x_all, first["in"][sel], m * c).reshape(sel.size, m, c)
            rows = _gather(rows_all, first["rows"][sel], n * t).reshape(sel.size, n * t)
            weights = _gather(weights_all, first["weights"][sel], n * t)
            picked = np.take_along_axis(x.astype(work), rows[:, :, None].astype(np.intp), 1)
            picked = picked.reshape(sel.size, n, t, c)
            y = np.einsum("vrt,vrtc->vrc", weights.reshape(sel.size, n, t).astype(work), picked)
            y += _gather(fill_all, first["fill"][sel], n).astype(work)[:, :, None]
            out[first["out"][sel, None] + np.arange(n * c)] = y.reshape(sel.size, -1)

    attrs = {
        "in_": Input(dtype),
        "rows": Input(UNSIGNED_INT),
        "weights": Input(dtype),
        "fill": Input(dtype),
        "out": Output(dtype),
        "type_name": f"popops::Resample<{dtype.name}>",
        "compute_batch": classmethod(compute_batch),
    }
    attrs.update({k: State(UNSIGNED_INT, 0) for k in _STATE})
    return register_builtin(type("Resample", (ResampleVertex,), attrs))
