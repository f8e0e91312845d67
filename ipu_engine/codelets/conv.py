"""The convolution partial codelet: one tile's share of a 2-D convolution -- some output
rows of one image, of one or more groups, some output channels, some input channels --
as an implicit GEMM. Vertices of equal sizes run as one batched product."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets import register_builtin
from ipu_engine.model.constants import MACS_PER_CYCLE, SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.types import UNSIGNED_INT, Type
from ipu_engine.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = (
    "outRows",  # output rows of the image this vertex computes
    "inRows",  # input rows it reads (the rows those outputs see, clipped to the image)
    "padTop",  # zero rows above the first input row
    "width",  # input width
    "outWidth",
    "groups",  # groups of its share (their channels lie side by side)
    "inChans",  # input channels per group of its share
    "outChans",  # output channels per group of its share
    "kernelH",
    "kernelW",
    "strideH",
    "strideW",
    "dilationH",
    "dilationW",
    "padLeft",  # zero columns left of the image (those on the right follow from the rest)
)


class ConvPartialVertex(Vertex):
    """A supervisor vertex driving the AMP unit over an implicit GEMM: for each output
    pixel, the kernel window of its input channels times the weights, per group."""

    supervisor = True
    code_bytes = 3200

    @classmethod
    def _macs(cls, sizes: VertexSizes) -> np.ndarray:
        names = ("outRows", "outWidth", "groups", "outChans", "kernelH", "kernelW", "inChans")
        return np.prod([sizes.state(k).astype(np.float64) for k in names], axis=0)

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        dtype = cls.fields["in"].type
        macs = MACS_PER_CYCLE.get(dtype.name if dtype else "float", MACS_PER_CYCLE["float"])
        return SUPERVISOR_OVERHEAD_CYCLES + cls._macs(sizes) / macs

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return 2 * cls._macs(sizes).astype(np.int64)


def _gather(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """Each start's ``size`` elements of ``values`` as rows (one slice when evenly spaced)."""
    if starts.size > 1 and np.all(np.diff(starts) == size):
        first = int(starts[0])
        return values[first : first + size * starts.size].reshape(starts.size, size)
    return values[starts[:, None] + np.arange(size)]


def _convolve_alike(x: np.ndarray, w: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """Vertices of one size: x [V, rows, width, G, C], w [V, KH, KW, C, G, F] ->
    [V, outRows, outWidth, G, F], in float32 (float16 products accumulate in float)."""
    rows, cols = g["outRows"], g["outWidth"]
    sh, sw, dh, dw = g["strideH"], g["strideW"], g["dilationH"], g["dilationW"]
    kh, kw = g["kernelH"], g["kernelW"]
    need_h, need_w = (rows - 1) * sh + dh * (kh - 1) + 1, (cols - 1) * sw + dw * (kw - 1) + 1
    bottom = need_h - g["padTop"] - g["inRows"]
    right = need_w - g["padLeft"] - g["width"]
    x = np.pad(
        x.astype(np.float32, copy=False),
        ((0, 0), (g["padTop"], max(bottom, 0)), (g["padLeft"], max(right, 0)), (0, 0), (0, 0)),
    )
    x = x.transpose(0, 3, 1, 2, 4)  # V, G, rows, cols, C
    w = w.astype(np.float32, copy=False).transpose(0, 4, 1, 2, 3, 5)  # V, G, KH, KW, C, F
    nv, groups, chans, outs = x.shape[0], x.shape[1], x.shape[-1], w.shape[-1]
    acc = np.zeros((nv, groups, rows * cols, outs), dtype=np.float32)
    for a in range(kh):
        for b in range(kw):
            window = x[:, :, a * dh : a * dh + (rows - 1) * sh + 1 : sh]
            window = window[:, :, :, b * dw : b * dw + (cols - 1) * sw + 1 : sw]
            patch = window.reshape(nv, groups, rows * cols, chans)
            if chans == 1:  # depthwise: an outer product, element-wise
                acc += patch * w[:, :, a, b]
            else:
                acc += patch @ w[:, :, a, b]
    return acc.reshape(nv, groups, rows, cols, outs).transpose(0, 2, 3, 1, 4)


def _compute(batch: VertexBatch, with_bias: bool) -> None:
    table = np.stack([batch.state(k).astype(np.int64) for k in _STATE], axis=1)
    unique, inverse = np.unique(table, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    x_all, w_all, out = batch["in"], batch["weights"], batch["out"]
    starts = {f: batch.offsets(f)[:-1] for f in ("in", "weights", "out")}
    for u, row in enumerate(unique.tolist()):
        g = dict(zip(_STATE, row, strict=True))
        sel = np.flatnonzero(inverse == u)
        groups, c, f = g["groups"], g["inChans"], g["outChans"]
        x = _gather(x_all, starts["in"][sel], g["inRows"] * g["width"] * groups * c)
        x = x.reshape(sel.size, g["inRows"], g["width"], groups, c)
        w = _gather(w_all, starts["weights"][sel], g["kernelH"] * g["kernelW"] * c * groups * f)
        w = w.reshape(sel.size, g["kernelH"], g["kernelW"], c, groups, f)
        y = _convolve_alike(x, w, g).reshape(sel.size, -1, groups * f)
        if with_bias:
            y += _gather(batch["bias"], batch.offsets("bias")[:-1][sel], groups * f)[:, None]
        size = y.shape[1] * y.shape[2]
        index = starts["out"][sel, None] + np.arange(size)
        out[index] = y.reshape(sel.size, size)


@functools.cache
def conv_partial(dtype: Type, with_bias: bool = False) -> type[Vertex]:
    """The codelet for ``dtype``; ``with_bias`` adds a ``bias`` input (the output channels'
    biases) to its partial sums."""

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        _compute(batch, with_bias)

    attrs = {
        "in_": Input(dtype),
        "weights": Input(dtype),
        "out": Output(dtype),
        "type_name": f"poplin::ConvPartialnx1<{dtype.name},{dtype.name}>",
        "compute_batch": classmethod(compute_batch),
    }
    if with_bias:
        attrs["bias"] = Input(dtype)
        attrs["type_name"] = f"poplin::ConvPartialnx1Bias<{dtype.name},{dtype.name}>"
    attrs.update({name: State(UNSIGNED_INT, 1) for name in _STATE})
    cls = type("ConvPartial", (ConvPartialVertex,), attrs)
    return register_builtin(cls)
