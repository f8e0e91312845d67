"""The convolution partial codelet: one tile's share of a 2-D convolution -- some output
rows of one image, of one or more groups, some output channels, some input channels --
as an implicit GEMM. Vertices of equal sizes run as one batched product."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets import conv_kept
from ipu_engine.codelets.alike_edges import (
    alike_vertices,
    read_group,
    write_group,
    writes_in_place,
)
from ipu_engine.codelets.blas_threads import one_blas_thread
from ipu_engine.codelets.conv_gemm import conv_grid, run_grid
from ipu_engine.codelets.conv_grouped import run_alike
from ipu_engine.common.types import FLOAT, HALF, UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import AMP_MACS_PER_CYCLE, SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

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
    channel_major = False  # see ``channel_major_variant``
    partials_type: Type = FLOAT  # what the AMP accumulates in

    @classmethod
    def _macs(cls, sizes: VertexSizes) -> np.ndarray:
        names = ("outRows", "outWidth", "groups", "outChans", "kernelH", "kernelW", "inChans")
        return np.prod([sizes.state(k).astype(np.float64) for k in names], axis=0)

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        dtype = cls.fields["in"].type
        key = (dtype.name if dtype else "float", cls.partials_type.name)
        macs = AMP_MACS_PER_CYCLE.get(key, AMP_MACS_PER_CYCLE["float", "float"])
        return SUPERVISOR_OVERHEAD_CYCLES + cls._macs(sizes) / macs

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return 2 * cls._macs(sizes).astype(np.int64)


def _convolve_alike(
    x: np.ndarray, w: np.ndarray, g: dict[str, int], partials: np.dtype
) -> np.ndarray:
    """Vertices of one size: x [V, rows, width, G, C], w [V, KH, KW, C, G, F] ->
    [V, outRows, outWidth, G, F] accumulated in ``partials``: float32 (half products are
    exact in it), or half rounded after every multiply-accumulate in the order the vertex
    walks its patch -- kernel row, kernel column, input channel."""
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
    acc = np.zeros((nv, groups, rows * cols, outs), dtype=partials)
    for a in range(kh):
        for b in range(kw):
            window = x[:, :, a * dh : a * dh + (rows - 1) * sh + 1 : sh]
            window = window[:, :, :, b * dw : b * dw + (cols - 1) * sw + 1 : sw]
            patch = window.reshape(nv, groups, rows * cols, chans)
            if partials == np.float16:  # one rounding per multiply-accumulate
                for c in range(chans):
                    term = patch[..., c, None] * w[:, :, a, b, c, None, :]
                    acc = (acc + term).astype(np.float16)
            elif chans == 1:  # depthwise: an outer product, element-wise
                acc += patch * w[:, :, a, b]
            else:
                acc += patch @ w[:, :, a, b]
    return acc.reshape(nv, groups, rows, cols, outs).transpose(0, 2, 3, 1, 4)


#: A group of alike vertices whose grid needs more products than this (one per vertex, as
#: a depthwise convolution's) runs as one batched product instead (``conv_grouped``).
MAX_GRID_PRODUCTS = 8


def _path(
    batch: VertexBatch,
    sel: np.ndarray,
    g: dict[str, int],
    with_bias: bool,
    partials: np.dtype,
    in_place: bool,
) -> tuple[str, object]:
    """How vertices ``sel`` run, and their grid: "half" (half partials round after every
    multiply-accumulate: vertex by vertex, in the vertex's order); "batched" (one product
    for all: one input channel per group -- outer products, nothing for BLAS to gain --
    or a grid of many small products); else "grid"."""
    if partials != np.float32:
        return "half", None
    if g["inChans"] == 1:
        return "batched", None
    grid = conv_grid(batch, sel, g, with_bias, in_place)
    if grid is None or len(grid.blocks) + len(grid.stacks) > MAX_GRID_PRODUCTS:
        return "batched", None
    return "grid", grid


def _compute(batch: VertexBatch, with_bias: bool, partials: np.dtype, channel_major: bool) -> None:
    names = ("in", "weights", "out") + (("bias",) if with_bias else ())
    pools = tuple(batch.pool(name) for name in names)
    if conv_kept.run_plan(batch, pools):  # every group's calls kept from the last run
        return
    alike = alike_vertices(batch, _STATE)
    out_sizes = [
        (sel, g["outRows"] * g["outWidth"] * g["groups"] * g["outChans"]) for g, sel in alike
    ]
    in_place = writes_in_place(batch, "out", out_sizes)
    paths = [_path(batch, sel, g, with_bias, partials, in_place) for g, sel in alike]
    # a batched group writes memory directly unless another group writes ``batch["out"]``,
    # whose gathered copy is stored back afterwards
    direct = in_place or all(path == "batched" for path, _ in paths)
    for (g, sel), (path, grid) in zip(alike, paths, strict=True):
        if path == "batched":
            run_alike(batch, sel, g, with_bias, channel_major, direct)
        elif path == "grid":
            run_grid(batch, grid, sel, g, channel_major, in_place, with_bias)
        else:
            conv_kept.missed(batch)
            _compute_alike(batch, sel, g, with_bias, partials, channel_major, in_place)
    conv_kept.finish(batch, pools)


def _compute_alike(
    batch: VertexBatch,
    sel: np.ndarray,
    g: dict[str, int],
    with_bias: bool,
    partials: np.dtype,
    channel_major: bool,
    in_place: bool,
) -> None:
    """Vertices ``sel`` of one size gathered, convolved kernel position by position."""
    groups, c, f = g["groups"], g["inChans"], g["outChans"]
    x = read_group(batch, "in", sel, g["inRows"] * g["width"] * groups * c)
    if channel_major:  # its edge is [channels, pixels]: the same elements, transposed
        x = x.reshape(sel.size, groups, c, g["inRows"], g["width"]).transpose(0, 3, 4, 1, 2)
    x = x.reshape(sel.size, g["inRows"], g["width"], groups, c)
    w = read_group(batch, "weights", sel, g["kernelH"] * g["kernelW"] * c * groups * f)
    w = w.reshape(sel.size, g["kernelH"], g["kernelW"], c, groups, f)
    y = _convolve_alike(x, w, g, partials).reshape(sel.size, -1, groups * f)
    if with_bias:  # added to the partial sums, in their type
        bias = read_group(batch, "bias", sel, groups * f)
        y = (y + bias[:, None]).astype(partials, copy=False)
    write_group(batch, "out", sel, y.reshape(sel.size, -1), in_place)


@functools.cache
def conv_partial(
    dtype: Type,
    partials_type: Type | None = None,
    out_type: Type | None = None,
    with_bias: bool = False,
) -> type[Vertex]:
    """The convolution codelet for ``dtype`` accumulating in ``partials_type`` (float
    unless half is asked for half inputs), writing ``out_type`` (default: the partials').
    ``with_bias`` adds a ``bias`` input (the output channels' biases) to its sums."""
    partials_type = HALF if dtype == HALF and partials_type == HALF else FLOAT
    out_type = out_type or partials_type
    accumulate = partials_type.numpy_dtype

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        with one_blas_thread():
            _compute(batch, with_bias, accumulate, cls.channel_major)

    names = f"{dtype.name},{partials_type.name}"
    if out_type != partials_type:  # results rounded to the output type as they are written
        names += f",{out_type.name}"
    attrs = {
        "in_": Input(dtype),
        "weights": Input(dtype),
        "out": Output(out_type),
        "partials_type": partials_type,
        "type_name": f"poplin::ConvPartialnx1{'Bias' if with_bias else ''}<{names}>",
        "compute_batch": classmethod(compute_batch),
    }
    if with_bias:
        attrs["bias"] = Input(dtype)
    attrs.update({name: State(UNSIGNED_INT, 1) for name in _STATE})
    cls = type("ConvPartial", (ConvPartialVertex,), attrs)
    return register_builtin(cls)


@functools.cache
def channel_major_variant(codelet: type[Vertex]) -> type[Vertex]:
    """``codelet`` reading its ``in`` edge channel by channel ([channels, pixels]): what
    a convolution connects when its input's channels are the outer dimension in memory
    (an NCHW activation seen as NHWC), so each edge is a few runs, not one address per
    element. The same vertex type -- name, state, cycles, memory -- read in another
    order; not registered by name (the row-major codelet owns it)."""
    variant = type(
        codelet.__name__, (codelet,), {"channel_major": True, "type_name": codelet.type_name}
    )
    variant.builtin = True
    return variant
