"""The matmul partial codelet: one tile's block product ``out = in @ weights``.

Half inputs are multiplied in the precision Poplar's ``partialsType`` names: with float
partials every product is accumulated in float32 and rounded once when written; with half
partials the running sum is rounded to half after each multiply-accumulate along ``k``.
"""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets.blas_threads import one_blas_thread
from ipu_engine.common.types import FLOAT, HALF, UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import AMP_MACS_PER_CYCLE, SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes


class MatMulPartialVertex(Vertex):
    """A supervisor vertex driving the tile's AMP unit for an [m,k] x [k,n] block."""

    supervisor = True
    code_bytes = 2400
    partials_type: Type = FLOAT  # what the AMP accumulates in

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        m, k, n = (sizes.state(s).astype(np.float64) for s in ("m", "k", "n"))
        dtype = cls.fields["in"].type
        key = (dtype.name if dtype else "float", cls.partials_type.name)
        macs = AMP_MACS_PER_CYCLE.get(key, AMP_MACS_PER_CYCLE["float", "float"])
        return SUPERVISOR_OVERHEAD_CYCLES + m * n * k / macs

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        m, k, n = (sizes.state(s).astype(np.int64) for s in ("m", "k", "n"))
        return 2 * m * n * k


Matrix = tuple[int, int, int, int]  # first address, rows, columns, row stride


def block_product(a: np.ndarray, b: np.ndarray, partials: np.dtype) -> np.ndarray:
    """``a @ b`` (stacks of matrices) accumulated in ``partials``: float32 sums rounded
    once by the caller's store, or half sums rounded after every multiply-accumulate."""
    a32, b32 = a.astype(np.float32, copy=False), b.astype(np.float32, copy=False)
    if partials != np.float16 or a.dtype != np.float16:
        return np.matmul(a32, b32)
    acc = np.zeros((*a.shape[:-1], b.shape[-1]), dtype=np.float16)
    for j in range(a.shape[-1]):  # exact half x half product, one rounding per step
        acc = (acc + a32[..., j : j + 1] * b32[..., j : j + 1, :]).astype(np.float16)
    return acc


def _blocks_in_place(
    batch: VertexBatch, m: np.ndarray, k: np.ndarray, n: np.ndarray, partials: np.dtype
) -> bool:
    """Each vertex's product straight from and into engine memory when its edges are
    blocks of matrices (the planner's layout): no gathered copies of the operands.
    Vertices whose blocks lie side by side or one under the other run as one product.
    Which products, over which blocks, depends on the graph alone: found once per
    compiled compute set (``batch.cache``), not vertex by vertex at every run."""
    key = ("matmul_blocks",)
    if key not in batch.cache:
        batch.cache[key] = _joined_blocks(batch, m, k, n)
    joined = batch.cache[key]
    if joined is None:
        return False
    for a, b, o in joined:
        views = (batch.grid_view(f, g) for f, g in (("in", a), ("weights", b), ("out", o)))
        va, vb, vo = views
        if va.dtype == vo.dtype == np.float32:
            np.matmul(va, vb, out=vo)  # float in, float out: no temporary
        else:
            vo[...] = block_product(va, vb, partials)
    return True


def _joined_blocks(
    batch: VertexBatch, m: np.ndarray, k: np.ndarray, n: np.ndarray
) -> list[tuple[Matrix, ...]] | None:
    """The products of ``_blocks_in_place``, or None when an edge is not a matrix."""
    grids = [batch.vertex_grids(f) for f in ("in", "weights", "out")]
    if any(g is None for g in grids):
        return None
    shapes = np.stack([m, k, k, n, m, n], axis=1).tolist()
    blocks = []
    for (ga, gb, go), (ma, ka, kb, nb, mo, no) in zip(
        zip(*grids, strict=True), shapes, strict=True
    ):
        a, b, o = _matrix(ga, ma, ka), _matrix(gb, kb, nb), _matrix(go, mo, no)
        if a is None or b is None or o is None:
            return None
        blocks.append((a, b, o))
    return _stacked(_side_by_side(blocks))


def _matrix(grid: tuple[int, int, int, int], rows: int, cols: int) -> Matrix | None:
    """A vertex's edge as a [rows, cols] matrix of memory, if it is one."""
    first, count, length, stride = grid
    if count == rows and length == cols:
        return (first, rows, cols, stride)
    if count == 1 and length == rows * cols:
        return (first, rows, cols, cols)
    return None


def _side_by_side(blocks: list[tuple[Matrix, Matrix, Matrix]]) -> list[tuple[Matrix, ...]]:
    """Join products of one ``in`` block by ``weights`` blocks lying side by side into
    outputs side by side: one larger product computes the same elements."""
    blocks = sorted(blocks)
    joined: list[tuple[Matrix, Matrix, Matrix]] = []
    for a, b, o in blocks:
        if joined and joined[-1][0] == a:
            pa, pb, po = joined[-1]
            wb, wo = _widened(pb, b), _widened(po, o)
            if wb is not None and wo is not None:
                joined[-1] = (pa, wb, wo)
                continue
        joined.append((a, b, o))
    return joined


def _stacked(blocks: list[tuple[Matrix, ...]]) -> list[tuple[Matrix, ...]]:
    """Join products by one ``weights`` block of ``in`` blocks one under the other into
    outputs one under the other (the row-wise counterpart of ``_side_by_side``)."""
    blocks = sorted(blocks, key=lambda t: (t[1], t[0]))
    joined: list[tuple[Matrix, ...]] = []
    for a, b, o in blocks:
        if joined and joined[-1][1] == b:
            pa, pb, po = joined[-1]
            ta, to = _lengthened(pa, a), _lengthened(po, o)
            if ta is not None and to is not None:
                joined[-1] = (ta, pb, to)
                continue
        joined.append((a, b, o))
    return joined


def _widened(left: Matrix, right: Matrix) -> Matrix | None:
    """``left`` and ``right`` as one matrix when ``right`` continues ``left``'s rows."""
    first, rows, cols, stride = left
    r_first, r_rows, r_cols, r_stride = right
    if r_rows != rows or r_first != first + cols or (rows > 1 and r_stride != stride):
        return None
    if rows > 1 and cols + r_cols > stride:
        return None
    return (first, rows, cols + r_cols, stride if rows > 1 else cols + r_cols)


def _lengthened(top: Matrix, bottom: Matrix) -> Matrix | None:
    """``top`` and ``bottom`` as one matrix when ``bottom``'s rows continue ``top``'s."""
    first, rows, cols, stride = top
    b_first, b_rows, b_cols, b_stride = bottom
    if b_cols != cols or b_stride != stride or b_first != first + rows * stride:
        return None
    return (first, rows + b_rows, cols, stride)


@functools.cache
def matmul_partial(
    dtype: Type, partials_type: Type | None = None, out_type: Type | None = None
) -> type[Vertex]:
    """The block-product codelet for ``dtype`` inputs accumulating in ``partials_type``
    (float unless half is asked for half inputs), writing ``out_type`` (default: the
    partials type: a split ``k`` keeps its partials in it for the reduction)."""
    partials_type = HALF if dtype == HALF and partials_type == HALF else FLOAT
    out_type = out_type or partials_type
    accumulate = partials_type.numpy_dtype

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        with one_blas_thread():
            _compute(batch, accumulate)

    def _compute(batch: VertexBatch, accumulate: np.dtype) -> None:
        m, k, n = (batch.state(s).astype(np.int64) for s in ("m", "k", "n"))
        if _blocks_in_place(batch, m, k, n, accumulate):
            return
        shapes = np.stack([m, k, n], axis=1)
        a_off, b_off, o_off = (batch.offsets(f)[:-1] for f in ("in", "weights", "out"))
        a, b, out = batch["in"], batch["weights"], batch["out"]
        # one batched matmul per distinct block shape (edge blocks may be smaller)
        unique, inverse = np.unique(shapes, axis=0, return_inverse=True)
        for u, (mm, kk, nn) in enumerate(unique.tolist()):
            sel = np.flatnonzero(inverse.reshape(-1) == u)
            a_idx = a_off[sel, None] + np.arange(mm * kk)
            b_idx = b_off[sel, None] + np.arange(kk * nn)
            o_idx = o_off[sel, None] + np.arange(mm * nn)
            prod = block_product(
                a[a_idx].reshape(-1, mm, kk), b[b_idx].reshape(-1, kk, nn), accumulate
            )
            out[o_idx] = prod.reshape(len(sel), mm * nn)

    names = f"{dtype.name},{partials_type.name}"
    if out_type != partials_type:  # results rounded to the output type as they are written
        names += f",{out_type.name}"
    cls = type(
        "MatMulPartial",
        (MatMulPartialVertex,),
        {
            "in_": Input(dtype),
            "weights": Input(dtype),
            "out": Output(out_type),
            "m": State(UNSIGNED_INT, 1),
            "k": State(UNSIGNED_INT, 1),
            "n": State(UNSIGNED_INT, 1),
            "partials_type": partials_type,
            "type_name": f"poplin::MatMulPartial<{names}>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)
