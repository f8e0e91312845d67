"""A convolution compute set's alike vertices as one batched product: what depthwise and
grouped convolutions need, whose vertices share neither inputs nor weights (each reads its
own groups), so that ``conv_gemm``'s grid is one small product per vertex -- 1,216 Python
calls per MobileNet depthwise layer.

Once per compiled compute set (``batch.cache``) each edge of the group is found either as
a strided view of memory over a grid of its vertices, ``[*grid, ...the field's own
shape]`` -- their addresses are affine in the vertices' order, the usual case, since the
vertices are made in a meshgrid of images, groups and row blocks -- or else as one index
array (a gather, or a scatter for the output). Each run is then a few numpy calls for the
whole group: kernel position by kernel position multiply-adds when each group has one
input channel (depthwise: an outer product, nothing for BLAS to gain), else
``conv_products.multiply`` with each vertex a layer of the batch (its patches times its
weights, one batched BLAS product). Sums accumulate in float32, the bias added last, as
the vertex adds it; outputs are written as views of memory where they are one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets.alike_edges import selection_key
from ipu_engine.codelets.conv_products import _overhang, multiply
from ipu_engine.codelets.conv_rows import merged_row_blocks
from ipu_engine.codelets.scratch import scratch
from ipu_engine.poplar.arrays import memory_view
from ipu_engine.poplar.vertex import VertexBatch

Affine = tuple[int, tuple[int, ...]]  # first address, step per axis


@dataclass(frozen=True)
class Edge:
    """Where one field of the group is: ``view`` (first address and steps over [*grid,
    *shape]) when affine, else ``index`` [*grid, *shape] addresses."""

    shape: tuple[int, ...]  # the field's own shape, per vertex
    view: Affine | None
    index: np.ndarray | None

    def read(self, pool: np.ndarray, grid: tuple[int, ...]) -> np.ndarray:
        """[*grid, *shape] values: a view of memory, or gathered."""
        if self.view is None:
            assert self.index is not None
            return pool[self.index]
        first, steps = self.view
        return _strided(pool, first, steps, (*grid, *self.shape))


def _strided(pool: np.ndarray, first: int, steps: tuple[int, ...], shape: tuple[int, ...]):
    """A view of ``pool``: the element at index (i, j, ...) is ``first + i * steps[0] +
    j * steps[1] + ...`` (steps forwards); writing into it writes memory."""
    if 0 in shape:
        return pool[first:first].reshape(shape)
    return memory_view(pool, first, shape, steps)


@dataclass(frozen=True)
class AlikeEdges:
    """A group of alike vertices' edges over one grid of its vertices (in their order)."""

    grid: tuple[int, ...]
    edges: dict[str, Edge]


def field_shapes(g: dict[str, int], channel_major: bool) -> dict[str, tuple[int, ...]]:
    """Each field's shape per vertex, in its edge's element order."""
    groups, c, f = g["groups"], g["inChans"], g["outChans"]
    rows, width = g["inRows"], g["width"]
    return {
        "in": (groups, c, rows, width) if channel_major else (rows, width, groups, c),
        "weights": (g["kernelH"], g["kernelW"], c, groups, f),
        "out": (g["outRows"], g["outWidth"], groups, f),
        "bias": (groups, f),
    }


def alike_edges(
    batch: VertexBatch,
    sel: np.ndarray,
    g: dict[str, int],
    names: tuple[str, ...],
    cm: bool,
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> AlikeEdges:
    """Fields ``names`` of vertices ``sel`` (all of sizes ``g``), found once per compiled
    compute set; each field of its shape in ``shapes`` (default: a convolution's,
    ``field_shapes``)."""
    shapes = shapes or field_shapes(g, cm)
    digest = selection_key(batch, sel)
    key = ("conv_alike_edges", digest, names, tuple(shapes[n] for n in names))
    if key not in batch.cache:
        batch.cache[key] = _find(batch, sel, names, shapes)
    return batch.cache[key]


def _addresses(batch: VertexBatch, name: str, sel: np.ndarray, size: int) -> np.ndarray:
    """[vertices, size] addresses of field ``name`` of vertices ``sel``."""
    first = batch.offsets(name)[:-1][sel]
    return batch.addresses(name)[first[:, None] + np.arange(size, dtype=np.int64)]


def _pattern(addresses: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Steps over ``shape`` of each vertex's addresses when they are affine in it, alike
    for every vertex, and step forwards; else None."""
    relative = addresses - addresses[:, :1]
    if not (relative == relative[0]).all():
        return None
    found = _fit(relative[0].reshape(shape))
    return None if found is None else found


def _fit(values: np.ndarray) -> tuple[int, ...] | None:
    """Steps per axis when ``values == values.flat[0] + sum(i_k * step_k)``, none
    negative; else None."""
    steps = []
    for axis, n in enumerate(values.shape):
        index = [0] * values.ndim
        if n > 1:
            index[axis] = 1
        steps.append(int(values[tuple(index)]) - int(values.flat[0]))
    expected = values.flat[0] + sum(
        np.arange(n, dtype=np.int64).reshape([-1 if k == a else 1 for k in range(values.ndim)]) * s
        for a, (n, s) in enumerate(zip(values.shape, steps, strict=True))
    )
    if min(steps, default=0) < 0 or not np.array_equal(expected, values):
        return None
    return tuple(steps)


def vertex_grid(starts: np.ndarray) -> tuple[int, ...] | None:
    """The grid [outer, ..., inner] the vertices' first addresses ``starts`` [vertices,
    fields] are affine over (each field with its own steps), innermost found first: the
    length over which every field keeps its step; None when there is none."""
    dims: list[int] = []
    rest = starts
    while rest.shape[0] > 1:
        step = rest[1] - rest[0]
        changes = np.flatnonzero((np.diff(rest, axis=0) != step).any(axis=1))
        inner = rest.shape[0] if changes.size == 0 else int(changes[0]) + 1
        if rest.shape[0] % inner:
            return None
        block = rest.reshape(-1, inner, rest.shape[1])
        if not (block - block[:, :1] == np.arange(inner)[:, None] * step).all():
            return None
        dims.insert(0, inner)
        rest = block[:, 0]
    return tuple(dims) or (1,)


def _find(
    batch: VertexBatch,
    sel: np.ndarray,
    names: tuple[str, ...],
    shapes: dict[str, tuple[int, ...]],
) -> AlikeEdges:
    found = {}
    for name in names:
        shape = shapes[name]
        addresses = _addresses(batch, name, sel, int(np.prod(shape)))
        pattern = _pattern(addresses, shape) if addresses.shape[1] else None
        found[name] = (shape, addresses, pattern)
    affine = [n for n, (_, a, p) in found.items() if p is not None]
    grid = None
    for fields in (affine, [n for n in ("out", "in") if n in affine], ["out"]):
        if fields and all(n in affine for n in fields):
            grid = vertex_grid(np.stack([found[n][1][:, 0] for n in fields], axis=1))
            if grid is not None:
                break
    grid = grid or (sel.size,)
    edges = {}
    for name, (shape, addresses, pattern) in found.items():
        view = None
        if pattern is not None:
            outer = _fit(addresses[:, 0].reshape(grid))
            if outer is not None:
                view = (int(addresses[0, 0]), (*outer, *pattern))
        index = None if view is not None else addresses.reshape(*grid, *shape)
        edges[name] = Edge(shape, view, index)
    return AlikeEdges(grid, edges)


def run_alike(
    batch: VertexBatch,
    sel: np.ndarray,
    g: dict[str, int],
    with_bias: bool,
    channel_major: bool,
    direct: bool,
) -> None:
    """Vertices ``sel`` (all of sizes ``g``), float32 sums, as one batched product.
    ``direct``: the output is written to memory (as a view or scattered), else into
    ``batch["out"]``, which the engine stores back."""
    names = ("in", "weights", "out") + (("bias",) if with_bias else ())
    found = alike_edges(batch, sel, g, names, channel_major)
    grid, edges = found.grid, found.edges
    if g["inChans"] == 1 and direct:  # row blocks of one image summed as one (conv_rows)
        views = {n: e.view for n, e in edges.items()}
        shapes = {n: e.shape for n, e in edges.items()}
        merged = merged_row_blocks(views, shapes, grid, g, channel_major, _overhang(g))
        if merged is not None:
            grid, merged_views, shapes, g = merged
            edges = {n: Edge(shapes[n], merged_views[n], None) for n in edges}
    x = edges["in"].read(batch.pool("in"), grid)
    if channel_major:  # [G, C, rows, width] -> [rows, width, G, C]
        x = np.moveaxis(x, (-4, -3), (-2, -1))
    w = edges["weights"].read(batch.pool("weights"), grid)
    bias = edges["bias"].read(batch.pool("bias"), grid) if with_bias else None
    out_edge = edges["out"]
    if g["inChans"] == 1:  # sums [*grid, G, F, rows, cols], written with the bias added
        if bias is not None:
            bias = bias.astype(np.float32, copy=False)[..., None, None]
        if direct and out_edge.view is not None:
            dest = np.moveaxis(out_edge.read(batch.pool("out"), grid), (-2, -1), (-4, -3))
            _depthwise(x, w, bias, g, dest)
            return
        shape = (*grid, g["groups"], g["outChans"], g["outRows"], g["outWidth"])
        y = np.empty(shape, np.float32)
        _depthwise(x, w, bias, g, y)
        y = np.moveaxis(y, (-4, -3), (-2, -1))
    else:
        y = _products(x, w, bias, g)
    if not direct:
        first = batch.offsets("out")[:-1][sel]
        size = int(np.prod(out_edge.shape))
        batch["out"][first[:, None] + np.arange(size)] = y.reshape(sel.size, size)
    elif out_edge.view is not None:  # rounded to the output's type as it is written
        out_edge.read(batch.pool("out"), grid)[...] = y
    else:
        assert out_edge.index is not None
        batch.pool("out")[out_edge.index] = y


def _depthwise(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, g: dict[str, int], dest: np.ndarray
) -> None:
    """``dest`` [*grid, G, F, rows, cols] = the sums of ``_outer_products`` + bias."""
    _finish(_outer_products(x, w, g), bias, dest)


def _finish(sums: np.ndarray, bias: np.ndarray | None, dest: np.ndarray) -> None:
    """``dest[...] = sums + bias``: the bias added to the float32 sums, as the vertex adds
    it, then rounded to ``dest``'s type as it is written. Walked in ``dest``'s memory
    order (every array's axes put in the order of ``dest``'s strides): channel-major sums
    written into an NHWC output go a row of channels at a time, not a channel at a time
    across the rows (0.26 -> 0.17 ms for a 64-channel 56x56 layer)."""
    if bias is not None and dest.dtype != np.float32:
        sums += bias
        bias = None
    order = sorted(range(dest.ndim), key=lambda axis: -abs(dest.strides[axis]))
    dest, sums = dest.transpose(order), sums.transpose(order)
    if bias is None:
        dest[...] = sums
    else:
        bias = bias.reshape((1,) * (len(order) - bias.ndim) + bias.shape)
        np.add(sums, bias.transpose(order), out=dest)


def _outer_products(x: np.ndarray, w: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """One input channel per group: x [*grid, rows, width, G, 1], w [*grid, KH, KW, 1, G,
    F] -> float32 sums [*grid, G, F, outRows, outWidth] (a view of scratch memory, valid
    until the next call), each kernel position one multiply-add of the whole group's
    windows, in the vertex's order (kernel row, kernel column).

    The input is first copied into a zero-padded contiguous image per group, so that a
    kernel position's windows are one strided view of it and the sums one contiguous
    array: at stride 1, an output row as wide as the padded input (its last columns
    thrown away) makes every window and the sums one run per vertex, a multiply-add over
    a few hundred elements at a time instead of one output row's. The image, the sums
    and each product are scratch arrays reused from run to run (``scratch``): fresh ones
    of a few MB cost more than the arithmetic."""
    rows, cols = g["outRows"], g["outWidth"]
    sh, sw, dh, dw = g["strideH"], g["strideW"], g["dilationH"], g["dilationW"]
    kh, kw, groups = g["kernelH"], g["kernelW"], g["groups"]
    top, bottom, left, right = _overhang(g)
    lead, (h, width) = x.shape[:-4], x.shape[-4:-2]
    hp, wp = max(top + h + bottom, top + h), max(left + width + right, left + width)
    span = wp if sh == sw == 1 else cols  # columns of each row of sums
    tail = (kw - 1) * dw
    padded = scratch("conv_image", (*lead, groups, hp * wp + tail), np.float32)
    image = padded[..., : hp * wp].reshape(*lead, groups, hp, wp)
    _zero_border(padded, image, top, h, left, width, tail)
    image[..., top : top + h, left : left + width] = np.moveaxis(x[..., 0], -1, -3)
    w = np.moveaxis(w[..., 0, :, :].astype(np.float32, copy=False), (-2, -1), (-4, -3))
    f = w.shape[-3]
    acc = scratch("conv_sums", (*lead, groups, f, rows, span), np.float32)
    term = scratch("conv_term", acc.shape, np.float32)
    item = padded.itemsize
    shape = (*lead, groups, 1, rows, span)
    strides = (*padded.strides[:-1], 0, sh * wp * item, sw * item)
    for a in range(kh):
        for b in range(kw):
            offset = (a * dh * wp + b * dw) * item
            # every window is whole (the padding is in the image)
            window = np.ndarray(shape, np.float32, padded, offset, strides)
            weight = w[..., a, b, None, None]  # [*grid, G, F, 1, 1]
            if a == b == 0:
                np.multiply(window, weight, out=acc)
            else:
                np.multiply(window, weight, out=term)
                acc += term
    return acc[..., :cols]


def _zero_border(
    padded: np.ndarray, image: np.ndarray, top: int, h: int, left: int, width: int, tail: int
) -> None:
    """Zeros around the image's interior (rows above and below, columns left and right)
    and in the tail the last windows overhang into: scratch memory holds old values. One
    fill of the whole buffer when there are columns to clear (a memset, where a column
    per row is a strided write per row: ~8x slower for a MobileNet layer)."""
    if left or image.shape[-1] > left + width:
        padded.fill(0)
        return
    if top:
        image[..., :top, :] = 0
    if image.shape[-2] > top + h:
        image[..., top + h :, :] = 0
    if tail:
        padded[..., -tail:] = 0


def _products(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    g: dict[str, int],
) -> np.ndarray:
    """Several input channels per group: each vertex a layer of one batched im2col
    product (``conv_products.multiply``, depth = vertices)."""
    grid = x.shape[:-4]
    v = int(np.prod(grid))
    # [rows, width, G, C] back to the edge's own order, each vertex one input of depth 1
    x = x.reshape(v, 1, *x.shape[-4:])
    w = w.reshape(v, 1, *w.shape[-5:])
    b = None if bias is None else bias.reshape(v, 1, *bias.shape[-2:])
    y = multiply(x, w, b, g, False, None)  # [v, 1, 1, pixels, G x F]
    shape = (*grid, g["outRows"], g["outWidth"], g["groups"], g["outChans"])
    return y.reshape(shape)
