"""A convolution compute set's alike vertices as a few large GEMMs, not one small product
per vertex.

Vertices of one size that read the same input rows (their output-channel blocks) and
vertices that use the same weights (their row blocks and images) form a grid: every input
of a grid block meets every weights block of it. The block is then one im2col of its
distinct inputs times its weights side by side -- ``[inputs x pixels, K] @ [K, weights x
F]``, per group -- and its result is written back vertex by vertex, as one strided view of
memory when the outputs are a regular block of it (the usual case: a convolution's output
rows and channels). The vertices' sums are the same products accumulated in float32,
in BLAS's order rather than kernel position by position; ``conv_products`` multiplies
them where the edges already are.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets import conv_kept, window_space
from ipu_engine.codelets.alike_edges import (
    GroupRuns,
    affine_steps,
    group_runs,
    read_group,
    selection_key,
    strided_view,
)
from ipu_engine.codelets.conv_products import multiply, prepare
from ipu_engine.poplar.vertex import VertexBatch

Affine = tuple[int, tuple[int, ...]]  # first address, step per axis
View = tuple[Affine, tuple[int, ...]]  # and the runs' shape


def affine_runs(starts: np.ndarray, taps: int) -> View | None:
    """Runs ``starts`` [..., runs] as a strided view: affine as they are, or with the runs
    split into kernel positions x the rest (a weights block's runs step by channel within
    a kernel position, then jump to the next position); else None."""
    found = affine_steps(starts)
    if found is not None:
        return found, starts.shape
    k = starts.shape[-1]
    if taps > 1 and k % taps == 0:
        shaped = starts.reshape(*starts.shape[:-1], taps, k // taps)
        found = affine_steps(shaped)
        if found is not None:
            return found, shaped.shape
    return None


@dataclass(frozen=True)
class Rows:
    """Some distinct edges of a field, in order, and where they are: ``view`` (a strided
    view's first address and steps, and its runs' shape) when affine, else None (gathered)."""

    ids: np.ndarray
    view: View | None


@dataclass(frozen=True)
class GridBlock:
    """Vertices of one size whose distinct inputs each meet all of its weights blocks."""

    inputs: Rows  # distinct inputs (GEMM row blocks), in address order
    columns: Rows  # distinct weights edges (GEMM column blocks)
    biases: Rows | None  # distinct bias edge of each column
    vertices: np.ndarray  # [inputs, columns] position of each vertex in the selection
    out_view: tuple[int, tuple[int, ...]] | None  # outputs as [inputs, columns, pixels]


@dataclass(frozen=True)
class Stack:
    """Grid blocks of one shape whose edges are all affine across the blocks too (an
    input-channel split gives one block per channel block, alike but for their offsets):
    one batched product for all, each edge read and each output written as one view."""

    depth: int  # blocks
    inputs: View  # [blocks, inputs, runs]
    columns: View  # [blocks, columns, runs] of the weights
    biases: View | None  # [blocks, columns, runs]
    out: Affine  # [blocks, inputs, columns, pixels]
    shape: tuple[int, int]  # inputs, columns of each block


@dataclass(frozen=True)
class ConvGrid:
    """The grid blocks of one group of alike vertices, and where their edges are (None:
    an edge not kept as uniform runs, each vertex read on its own from ``batch[name]``);
    blocks that stack run as ``stacks``, the others one by one."""

    inputs: GroupRuns | None
    weights: GroupRuns | None
    bias: GroupRuns | None
    blocks: tuple[GridBlock, ...]
    stacks: tuple[Stack, ...] = ()


def sizes_of(g: dict[str, int]) -> tuple[int, int, int]:
    """Elements of a vertex's input, weights and output edges."""
    groups, c, f = g["groups"], g["inChans"], g["outChans"]
    return (
        g["inRows"] * g["width"] * groups * c,
        g["kernelH"] * g["kernelW"] * c * groups * f,
        g["outRows"] * g["outWidth"] * groups * f,
    )


def conv_grid(
    batch: VertexBatch, sel: np.ndarray, g: dict[str, int], with_bias: bool, in_place: bool
) -> ConvGrid | None:
    """Vertices ``sel`` (all of sizes ``g``) as grid blocks, found once per compiled
    compute set; None when two vertices do the same work."""
    digest = selection_key(batch, sel)
    key = ("conv_grid", digest, in_place)
    if key not in batch.cache:
        batch.cache[key] = _find_grid(batch, sel, g, with_bias, in_place)
    return batch.cache[key]


def _ids(found: GroupRuns | None, count: int) -> np.ndarray:
    """The distinct edge each vertex reads (each its own when not kept as runs)."""
    if found is None or found.inverse is None:
        return np.arange(count)
    return found.inverse


def _rows(found: GroupRuns | None, ids: np.ndarray, taps: int = 1) -> Rows:
    return Rows(ids, None if found is None else affine_runs(found.starts[ids], taps))


def _find_grid(
    batch: VertexBatch, sel: np.ndarray, g: dict[str, int], with_bias: bool, in_place: bool
) -> ConvGrid | None:
    in_size, w_size, out_size = sizes_of(g)
    inputs = group_runs(batch, "in", sel, in_size)
    weights = group_runs(batch, "weights", sel, w_size)
    bias = group_runs(batch, "bias", sel, g["groups"] * g["outChans"]) if with_bias else None
    in_of, w_of = _ids(inputs, sel.size), _ids(weights, sel.size)
    b_of = _ids(bias, sel.size) if with_bias else np.zeros_like(w_of)
    column_pairs, col_of = np.unique(np.stack([w_of, b_of], axis=1), axis=0, return_inverse=True)
    col_of = col_of.reshape(-1)
    n_cols = column_pairs.shape[0]
    if np.unique(in_of * n_cols + col_of).size != sel.size:
        return None  # two vertices doing the same work: written one by one elsewhere
    order = np.lexsort((col_of, in_of))
    cuts = np.flatnonzero(np.diff(in_of[order])) + 1
    by_columns: dict[bytes, list[np.ndarray]] = {}
    for verts in np.split(order, cuts):
        by_columns.setdefault(col_of[verts].tobytes(), []).append(verts)
    out = group_runs(batch, "out", sel, out_size) if in_place else None
    blocks = []
    for rows in by_columns.values():
        vertices = np.stack(rows)  # [inputs, columns]
        cols = col_of[vertices[0]]
        blocks.append(
            GridBlock(
                inputs=_rows(inputs, in_of[vertices[:, 0]]),
                columns=_rows(weights, column_pairs[cols, 0], g["kernelH"] * g["kernelW"]),
                biases=_rows(bias, column_pairs[cols, 1]) if with_bias else None,
                vertices=vertices,
                out_view=_out_view(out, vertices, g) if out is not None else None,
            )
        )
    if out is None or inputs is None or weights is None or (with_bias and bias is None):
        return ConvGrid(inputs, weights, bias, tuple(blocks))
    by_shape: dict[tuple[int, int], list[GridBlock]] = {}
    for block in blocks:
        by_shape.setdefault(block.vertices.shape, []).append(block)
    singles, stacks = [], []
    for alike in by_shape.values():
        stack = _stack(alike, inputs, weights, bias, out, g) if len(alike) > 1 else None
        if stack is None:
            singles.extend(alike)
        else:
            stacks.append(stack)
    return ConvGrid(inputs, weights, bias, tuple(singles), tuple(stacks))


def _stack(
    blocks: list[GridBlock],
    inputs: GroupRuns,
    weights: GroupRuns,
    bias: GroupRuns | None,
    out: GroupRuns,
    g: dict[str, int],
) -> Stack | None:
    """``blocks`` as one stack when every edge is affine across them, else None."""
    pixels = [_out_pixels(out, b.vertices, g) for b in blocks]
    if any(p is None for p in pixels):
        return None
    taps = g["kernelH"] * g["kernelW"]
    found = [
        affine_runs(np.stack([inputs.starts[b.inputs.ids] for b in blocks]), 1),
        affine_runs(np.stack([weights.starts[b.columns.ids] for b in blocks]), taps),
        affine_steps(np.stack(pixels)),
    ]
    if bias is not None:
        found.append(affine_runs(np.stack([bias.starts[b.biases.ids] for b in blocks]), 1))
    if any(f is None for f in found):
        return None
    in_view, w_view, out_view = found[:3]
    b_view = found[3] if bias is not None else None
    shape = blocks[0].vertices.shape
    return Stack(len(blocks), in_view, w_view, b_view, out_view, (shape[0], shape[1]))


def _out_pixels(out: GroupRuns, vertices: np.ndarray, g: dict[str, int]) -> np.ndarray | None:
    """[inputs, columns, pixels] first addresses of the block's output pixels (rows of
    groups x outChans elements), or None when a run is not whole pixels."""
    row = g["groups"] * g["outChans"]
    if out.length % row:
        return None
    per_run = out.length // row
    starts = out.starts[vertices]  # [inputs, columns, runs]
    pixels = starts[..., None] + np.arange(per_run, dtype=np.int64) * row
    return pixels.reshape(*vertices.shape, -1)


def _out_view(out: GroupRuns, vertices: np.ndarray, g: dict[str, int]) -> Affine | None:
    """The block's outputs as a strided view [inputs, columns, pixels] of rows of
    groups x outChans elements, when their runs are affine; else None (then scattered)."""
    pixels = _out_pixels(out, vertices, g)
    return None if pixels is None else affine_steps(pixels)


def run_grid(
    batch: VertexBatch,
    grid: ConvGrid,
    sel: np.ndarray,
    g: dict[str, int],
    channel_major: bool,
    in_place: bool,
    with_bias: bool,
) -> None:
    """Every stack and block of ``grid``: one batched product each, written where it goes."""
    in_size, w_size, _ = sizes_of(g)
    bias_size = g["groups"] * g["outChans"]
    names = ("in", "weights", "out") + (("bias",) if with_bias else ())
    pools = tuple(batch.pool(name) for name in names)
    for stack in grid.stacks:
        if not _kept_product(batch, ("stack", id(stack)), pools):
            _run_stack(batch, grid, stack, g, channel_major, pools)
    read = _Reader(batch, sel)
    for block in grid.blocks:
        if _kept_product(batch, ("block", id(block)), pools):
            continue
        x = read("in", grid.inputs, block.inputs, in_size)[None]
        w = read("weights", grid.weights, block.columns, w_size)[None]
        bias = None
        if block.biases is not None:
            bias = read("bias", grid.bias, block.biases, bias_size)[None]
        out = None
        if in_place and block.out_view is not None:
            ub, wb = block.vertices.shape
            pixels = g["outRows"] * g["outWidth"]
            out = strided_view(batch.pool("out"), *block.out_view, (ub, wb, pixels), bias_size)
            out = out[None]
            if _keep_product(batch, ("block", id(block)), pools, x, w, bias, g, channel_major, out):
                continue
        conv_kept.missed(batch)
        y = multiply(x, w, bias, g, channel_major, out)
        if y is not None:
            _write(batch, block, sel, y[0], in_place)


def _kept_product(batch: VertexBatch, key: tuple, pools: tuple[np.ndarray, ...]) -> bool:
    """Run the product kept for ``key`` (``_keep_product``) if memory is still the same
    arrays its views are of; whether it ran."""
    kept = batch.cache.get(key)
    if kept is None or any(a is not b for a, b in zip(kept[0], pools, strict=True)):
        if kept is not None:  # memory is other arrays: found again
            del batch.cache[key]
        return False
    fn, args = kept[1]
    fn(*args)
    conv_kept.log_call(batch, fn, args)
    return True


def _keep_product(
    batch: VertexBatch,
    key: tuple,
    pools: tuple[np.ndarray, ...],
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    g: dict[str, int],
    channel_major: bool,
    out: np.ndarray,
) -> bool:
    """The product as a call of views of memory (``conv_products.prepare``), kept in
    ``batch.cache`` and run; False (nothing run) when an operand is a copy. A kept product
    is its window copies and BLAS call alone from the next run on: the ~20 numpy calls
    that shape the views (a few us each) were ~0.15 ms of the MobileNet block's pointwise
    convolution, and ResNet-50's padded windows ~10 ms a run."""
    if key in batch.cache:  # found not to be views of memory: not tried again
        return False
    make = functools.partial(window_space.take, batch, pools[0])
    call = prepare(x, w, bias, g, channel_major, out, pools, make)
    if call is None:
        batch.cache[key] = None  # (its im2col copied twice a run, else: ResNet-50 +9 ms)
        return False
    batch.cache[key] = (pools, call)
    fn, args = call
    fn(*args)
    conv_kept.log_call(batch, fn, args)
    return True


def _run_stack(
    batch: VertexBatch,
    grid: ConvGrid,
    stack: Stack,
    g: dict[str, int],
    channel_major: bool,
    pools: tuple[np.ndarray, ...],
) -> None:
    """One product for the stack: each edge a strided view of memory, in its own shape."""
    depth, (ub, wb) = stack.depth, stack.shape

    def view(name: str, found: GroupRuns | None, where: View) -> np.ndarray:
        assert found is not None
        (first, steps), shape = where
        return strided_view(batch.pool(name), first, steps, shape, found.length)

    # each edge stays a view [depth, rows, ...runs, length]: ``multiply`` shapes it as
    # its field (no copy where the strides allow), where flattening it would copy it
    x = view("in", grid.inputs, stack.inputs)
    w = view("weights", grid.weights, stack.columns)
    bias = None if stack.biases is None else view("bias", grid.bias, stack.biases)
    pixels = g["outRows"] * g["outWidth"]
    row = g["groups"] * g["outChans"]
    out = strided_view(batch.pool("out"), *stack.out, (depth, ub, wb, pixels), row)
    if not _keep_product(batch, ("stack", id(stack)), pools, x, w, bias, g, channel_major, out):
        conv_kept.missed(batch)
        multiply(x, w, bias, g, channel_major, out)


class _Reader:
    """The values of some distinct edges of a field, for one run of a compute set."""

    def __init__(self, batch: VertexBatch, sel: np.ndarray) -> None:
        self.batch, self.sel = batch, sel
        self.per_vertex: dict[str, np.ndarray] = {}

    def __call__(self, name: str, found: GroupRuns | None, rows: Rows, size: int) -> np.ndarray:
        """[rows, ...] values: a view of memory when affine, else gathered."""
        if found is None:  # not runs: every vertex's own edge, read once per run
            if name not in self.per_vertex:
                self.per_vertex[name] = read_group(self.batch, name, self.sel, size)
            return self.per_vertex[name][rows.ids]
        pool = self.batch.pool(name)
        if rows.view is not None:
            (first, steps), shape = rows.view
            # [rows, ...runs, length]: shaped by ``multiply``, flattened it would be a copy
            return strided_view(pool, first, steps, shape, found.length)
        starts = found.starts[rows.ids]
        return pool[starts[..., None] + np.arange(found.length, dtype=np.int64)]


def _write(
    batch: VertexBatch,
    block: GridBlock,
    sel: np.ndarray,
    y: np.ndarray,
    in_place: bool,
) -> None:
    """[inputs, columns, pixels, G x F] results to the block's vertices' outputs."""
    ub, wb, size = y.shape[0], y.shape[1], y.shape[2] * y.shape[3]
    if not in_place:  # into the gathered output, stored back by the engine
        first = batch.offsets("out")[:-1][sel[block.vertices]]
        batch["out"][first[..., None] + np.arange(size)] = y.reshape(ub, wb, size)
        return
    pool = batch.pool("out")  # not a strided view (``multiply`` writes those): run by run
    out = group_runs(batch, "out", sel, size)
    assert out is not None
    starts = out.starts[block.vertices]
    addresses = starts[..., None] + np.arange(out.length, dtype=np.int64)
    pool[addresses.reshape(ub, wb, size)] = y.reshape(ub, wb, size)
