"""A convolution compute set's alike vertices as one batched product: what depthwise and
grouped convolutions need, whose vertices share neither inputs nor weights (each reads its
own groups), so that ``conv_gemm``'s grid is one small product per vertex -- 1,216 Python
calls per MobileNet depthwise layer.

Once per compiled compute set (``batch.cache``) each edge of the group is found either as
a strided view of memory over a grid of its vertices, ``[*grid, ...the field's own
shape]`` -- their addresses are affine in the vertices' order, the usual case, since the
vertices are made in a meshgrid of images, groups and row blocks -- or else as one index
array (a gather, or a scatter for the output). Each run is then one call for the whole
group: when each group has one input channel (depthwise: an outer product, nothing for
BLAS to gain) the C kernel ``kernels.depthwise`` sums every output's window kernel
position by kernel position, in the vertex's order, into the output's memory; else
``conv_products.multiply`` with each vertex a layer of the batch (its patches times its
weights, one batched BLAS product). Sums accumulate in float32, the bias added last, as
the vertex adds it; outputs are written as views of memory where they are one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets import conv_kept, kernels
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
    pools = tuple(batch.pool(name) for name in names)
    kept = batch.cache.get(("kept_depthwise", selection_key(batch, sel)))
    if kept is not None and all(a is b for a, b in zip(kept[0], pools, strict=True)):
        kernels.depthwise(*kept[1])  # its views of memory, as the last run made them
        conv_kept.log_call(batch, kernels.depthwise, kept[1])
        return
    if not _run_group(batch, sel, g, names, pools, with_bias, channel_major, direct):
        conv_kept.missed(batch)


def _run_group(
    batch: VertexBatch,
    sel: np.ndarray,
    g: dict[str, int],
    names: tuple[str, ...],
    pools: tuple[np.ndarray, ...],
    with_bias: bool,
    channel_major: bool,
    direct: bool,
) -> bool:
    """``run_alike``'s work; whether it was one kernel call of views of memory, kept."""
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
        if direct and out_edge.view is not None:
            dest = np.moveaxis(out_edge.read(batch.pool("out"), grid), (-2, -1), (-4, -3))
            call = _depthwise(x, w, bias, g, dest)
            if call is None or not _views_of_memory(call, names, pools):
                return False
            # the same call computes the next run too, from memory's values then
            batch.cache[("kept_depthwise", selection_key(batch, sel))] = (pools, call)
            conv_kept.log_call(batch, kernels.depthwise, call)
            return True
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
    return False


def _views_of_memory(call: tuple, names: tuple[str, ...], pools: tuple[np.ndarray, ...]) -> bool:
    """Whether ``kernels.depthwise``'s x, w, out (and bias) are views of their edges'
    memory, not copies made for this run."""
    x, w, bias, sums = call[:4]
    arrays = {"in": x, "weights": w, "out": sums, "bias": bias}
    return all(np.may_share_memory(arrays[n], p) for n, p in zip(names, pools, strict=True))


def _depthwise(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, g: dict[str, int], dest: np.ndarray
) -> tuple | None:
    """One input channel per group: x [*grid, rows, width, G, 1], w [*grid, KH, KW, 1, G,
    F], bias [*grid, G, F] -> ``dest`` [*grid, G, F, outRows, outWidth]: each output 0 +
    its window's products, kernel row by kernel row, column by column, in float32, then
    the bias added, as the vertex sums (``kernels.depthwise``, one C call for the group:
    numpy took ~20 passes over the whole layer). Sums into ``dest`` where it is float32,
    else into scratch memory, rounded to ``dest``'s type as they are written. Returns the
    kernel's arguments when one call made the sums in ``dest`` (else None): when they are
    all views of memory, the caller keeps them for the next run, a call without the
    ~15 numpy calls that find the views (``run_alike``)."""
    top, _, left, _ = _overhang(g)
    geometry = (top, left, g["strideH"], g["strideW"], g["dilationH"], g["dilationW"])
    x = x[..., 0].astype(np.float32, copy=False)
    w = w[..., 0, :, :].astype(np.float32, copy=False)
    if bias is not None:
        bias = bias.astype(np.float32, copy=False)
    sums = dest if dest.dtype == np.float32 else scratch("conv_sums", dest.shape, np.float32)
    lead = x.ndim - 3
    if lead <= kernels.MAX_LEAD_DIMS:
        kernels.depthwise(x, w, bias, sums, *geometry)
    else:  # a grid of more axes than the kernel takes: its outer ones walked here
        for i in np.ndindex(x.shape[: lead - kernels.MAX_LEAD_DIMS]):
            b = None if bias is None else bias[i]
            kernels.depthwise(x[i], w[i], b, sums[i], *geometry)
        return None
    if sums is not dest:
        dest[...] = sums
        return None
    return (x, w, bias, sums, *geometry)


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
