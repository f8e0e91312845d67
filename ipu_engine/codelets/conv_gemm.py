"""A convolution compute set's alike vertices as a few large GEMMs, not one small product
per vertex.

Vertices of one size that read the same input rows (their output-channel blocks) and
vertices that use the same weights (their row blocks and images) form a grid: every input
of a grid block meets every weights block of it. The block is then one im2col of its
distinct inputs times its weights side by side -- ``[inputs x pixels, K] @ [K, weights x
F]``, per group -- and its result is written back vertex by vertex, as one strided view of
memory when the outputs are a regular block of it (the usual case: a convolution's output
rows and channels). The vertices' sums are the same products accumulated in float32,
in BLAS's order rather than kernel position by position.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets.alike_edges import (
    GroupRuns,
    affine_steps,
    group_runs,
    read_group,
    strided_view,
)
from ipu_engine.vertex import VertexBatch


@dataclass(frozen=True)
class Rows:
    """Some distinct edges of a field, in order, and where they are: ``affine`` (first
    address, steps) when a strided view reads them, else None (gathered)."""

    ids: np.ndarray
    affine: tuple[int, tuple[int, ...]] | None


@dataclass(frozen=True)
class GridBlock:
    """Vertices of one size whose distinct inputs each meet all of its weights blocks."""

    inputs: Rows  # distinct inputs (GEMM row blocks), in address order
    columns: Rows  # distinct weights edges (GEMM column blocks)
    biases: Rows | None  # distinct bias edge of each column
    vertices: np.ndarray  # [inputs, columns] position of each vertex in the selection
    out_view: tuple[int, tuple[int, ...]] | None  # outputs as [inputs, columns, pixels]


@dataclass(frozen=True)
class ConvGrid:
    """The grid blocks of one group of alike vertices, and where their edges are (None:
    an edge not kept as uniform runs, each vertex read on its own from ``batch[name]``)."""

    inputs: GroupRuns | None
    weights: GroupRuns | None
    bias: GroupRuns | None
    blocks: tuple[GridBlock, ...]


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
    digest = hashlib.blake2b(sel.tobytes(), digest_size=16).digest()
    key = ("conv_grid", digest, in_place)
    if key not in batch.cache:
        batch.cache[key] = _find_grid(batch, sel, g, with_bias, in_place)
    return batch.cache[key]


def _ids(found: GroupRuns | None, count: int) -> np.ndarray:
    """The distinct edge each vertex reads (each its own when not kept as runs)."""
    if found is None or found.inverse is None:
        return np.arange(count)
    return found.inverse


def _rows(found: GroupRuns | None, ids: np.ndarray) -> Rows:
    return Rows(ids, None if found is None else affine_steps(found.starts[ids]))


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
                columns=_rows(weights, column_pairs[cols, 0]),
                biases=_rows(bias, column_pairs[cols, 1]) if with_bias else None,
                vertices=vertices,
                out_view=_out_view(out, vertices, g) if out is not None else None,
            )
        )
    return ConvGrid(inputs, weights, bias, tuple(blocks))


def _out_view(
    out: GroupRuns, vertices: np.ndarray, g: dict[str, int]
) -> tuple[int, tuple[int, ...]] | None:
    """The block's outputs as a strided view [inputs, columns, pixels] of rows of
    groups x outChans elements, when their runs are affine; else None (then scattered)."""
    row = g["groups"] * g["outChans"]
    if out.length % row:
        return None
    per_run = out.length // row
    starts = out.starts[vertices]  # [inputs, columns, runs]
    pixels = starts[..., None] + np.arange(per_run, dtype=np.int64) * row
    return affine_steps(pixels.reshape(*vertices.shape, -1))


def _im2col(x: np.ndarray, g: dict[str, int], channel_major: bool) -> np.ndarray:
    """Distinct inputs [U, ...] -> [G, U x outRows x outWidth, KH x KW x C] float32 patches,
    the kernel window of every output pixel (zeros where it overhangs the image)."""
    u, groups, c = x.shape[0], g["groups"], g["inChans"]
    h, w, rows, cols = g["inRows"], g["width"], g["outRows"], g["outWidth"]
    if channel_major:  # its edge is [channels, pixels]
        x = x.reshape(u, groups, c, h, w).transpose(1, 0, 3, 4, 2)
    else:
        x = x.reshape(u, h, w, groups, c).transpose(3, 0, 1, 2, 4)  # G, U, H, W, C
    sh, sw, dh, dw = g["strideH"], g["strideW"], g["dilationH"], g["dilationW"]
    kh, kw, top, left = g["kernelH"], g["kernelW"], g["padTop"], g["padLeft"]
    need_h, need_w = (rows - 1) * sh + dh * (kh - 1) + 1, (cols - 1) * sw + dw * (kw - 1) + 1
    bottom, right = max(need_h - top - h, 0), max(need_w - left - w, 0)
    if top or left or bottom or right:
        padded = np.zeros((groups, u, top + h + bottom, left + w + right, c), np.float32)
        padded[:, :, top : top + h, left : left + w] = x
        x = padded
    patches = np.empty((groups, u, rows, cols, kh * kw, c), np.float32)
    for a in range(kh):
        for b in range(kw):
            window = x[:, :, a * dh : a * dh + (rows - 1) * sh + 1 : sh]
            patches[:, :, :, :, a * kw + b] = window[
                :, :, :, b * dw : b * dw + (cols - 1) * sw + 1 : sw
            ]
    return patches.reshape(groups, u * rows * cols, kh * kw * c)


def run_grid(
    batch: VertexBatch,
    grid: ConvGrid,
    sel: np.ndarray,
    g: dict[str, int],
    channel_major: bool,
    in_place: bool,
    with_bias: bool,
) -> None:
    """Every block of ``grid``: one im2col, one GEMM per group, one write of its outputs."""
    in_size, w_size, _ = sizes_of(g)
    groups, f = g["groups"], g["outChans"]
    read = _Reader(batch, sel)
    kh, kw, c = g["kernelH"], g["kernelW"], g["inChans"]
    pixels = g["outRows"] * g["outWidth"]
    for block in grid.blocks:
        ub, wb = block.vertices.shape
        patches = _im2col(read("in", grid.inputs, block.inputs, in_size), g, channel_major)
        w = read("weights", grid.weights, block.columns, w_size)
        wcat = np.empty((groups, kh, kw, c, wb, f), np.float32)
        wcat[...] = w.reshape(wb, kh, kw, c, groups, f).transpose(4, 1, 2, 3, 0, 5)
        r = np.matmul(patches, wcat.reshape(groups, kh * kw * c, wb * f))
        r = r.reshape(groups, ub, pixels, wb, f)
        if block.biases is not None:  # added to the sums, as the vertex adds it
            bias = read("bias", grid.bias, block.biases, groups * f)
            r += bias.reshape(wb, groups, f).transpose(1, 0, 2)[:, None, None]
        y = r.transpose(1, 3, 2, 0, 4).reshape(ub, wb, pixels, groups * f)
        _write(batch, block, sel, y, in_place)


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
        if rows.affine is not None:
            view = strided_view(
                pool, *rows.affine, (rows.ids.size, found.starts.shape[1]), found.length
            )
            return view.reshape(rows.ids.size, -1) if view.flags.c_contiguous else view
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
    pool = batch.pool("out")
    if block.out_view is not None:
        view = strided_view(pool, *block.out_view, y.shape[:3], y.shape[3])
        view[...] = y
        return
    out = group_runs(batch, "out", sel, size)
    assert out is not None
    starts = out.starts[block.vertices]
    addresses = starts[..., None] + np.arange(out.length, dtype=np.int64)
    pool[addresses.reshape(ub, wb, size)] = y.reshape(ub, wb, size)
