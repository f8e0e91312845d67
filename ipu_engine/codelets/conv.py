"""The convolution partial codelet: one tile's share of a 2-D convolution -- some output
rows of one image, some output channels, some input channels -- as an implicit GEMM."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets import register_builtin
from ipu_engine.codelets.matmul import block_product
from ipu_engine.model.constants import AMP_MACS_PER_CYCLE, SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.types import FLOAT, HALF, UNSIGNED_INT, Type
from ipu_engine.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = (
    "outRows",  # output rows of the image this vertex computes
    "inRows",  # input rows it reads (the rows those outputs see, clipped to the image)
    "padTop",  # zero rows above the first input row
    "width",  # input width
    "outWidth",
    "inChans",  # input channels of its share
    "outChans",  # output channels of its share
    "kernelH",
    "kernelW",
    "stride",
    "padding",  # zero columns on each side
)


class ConvPartialVertex(Vertex):
    """A supervisor vertex driving the AMP unit over an implicit GEMM: for each output
    pixel, the kernel window of its input channels times the weights."""

    supervisor = True
    code_bytes = 3200
    partials_type: Type = FLOAT  # what the AMP accumulates in

    @classmethod
    def _macs(cls, sizes: VertexSizes) -> np.ndarray:
        s = {k: sizes.state(k).astype(np.float64) for k in _STATE}
        return (
            s["outRows"]
            * s["outWidth"]
            * s["outChans"]
            * s["kernelH"]
            * s["kernelW"]
            * s["inChans"]
        )

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        dtype = cls.fields["in"].type
        key = (dtype.name if dtype else "float", cls.partials_type.name)
        macs = AMP_MACS_PER_CYCLE.get(key, AMP_MACS_PER_CYCLE["float", "float"])
        return SUPERVISOR_OVERHEAD_CYCLES + cls._macs(sizes) / macs

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return 2 * cls._macs(sizes).astype(np.int64)


@functools.cache
def conv_partial(
    dtype: Type, partials_type: Type | None = None, out_type: Type | None = None
) -> type[Vertex]:
    """The convolution codelet for ``dtype`` accumulating in ``partials_type`` (float
    unless half is asked for half inputs), writing ``out_type`` (default: the partials')."""
    partials_type = HALF if dtype == HALF and partials_type == HALF else FLOAT
    out_type = out_type or partials_type
    accumulate = partials_type.numpy_dtype

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        state = {k: batch.state(k).astype(np.int64) for k in _STATE}
        for i in range(batch.count):
            g = {k: int(v[i]) for k, v in state.items()}
            c, f, kh, kw = g["inChans"], g["outChans"], g["kernelH"], g["kernelW"]
            x = batch.vertex_values("in", i).reshape(g["inRows"], g["width"], c)
            stride, pad = g["stride"], g["padding"]
            needed = (g["outRows"] - 1) * stride + kh
            bottom = needed - g["padTop"] - g["inRows"]
            x = np.pad(x, ((g["padTop"], max(bottom, 0)), (pad, pad), (0, 0)))
            windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(0, 1))
            windows = windows[::stride, ::stride][: g["outRows"], : g["outWidth"]]
            # (rows, cols, c, kh, kw) -> (pixels, kh * kw * c), as the weights are laid out
            patches = windows.transpose(0, 1, 3, 4, 2).reshape(-1, kh * kw * c)
            weights = batch.vertex_values("weights", i).reshape(kh * kw * c, f)
            product = block_product(patches, weights, accumulate)
            batch.set_vertex_values("out", i, product.reshape(-1))

    names = f"{dtype.name},{partials_type.name}"
    if out_type != partials_type:  # results rounded to the output type as they are written
        names += f",{out_type.name}"
    attrs = {
        "in_": Input(dtype),
        "weights": Input(dtype),
        "out": Output(out_type),
        "partials_type": partials_type,
        "type_name": f"poplin::ConvPartialnx1<{names}>",
        "compute_batch": classmethod(compute_batch),
    }
    attrs.update({name: State(UNSIGNED_INT, 1) for name in _STATE})
    cls = type("ConvPartial", (ConvPartialVertex,), attrs)
    return register_builtin(cls)
