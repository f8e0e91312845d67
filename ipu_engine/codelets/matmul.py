"""The matmul partial codelet: one tile's block product ``out = in @ weights``."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets import register_builtin
from ipu_engine.model.constants import MACS_PER_CYCLE, SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.types import UNSIGNED_INT, Type
from ipu_engine.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes


class MatMulPartialVertex(Vertex):
    """A supervisor vertex driving the tile's AMP unit for an [m,k] x [k,n] block."""

    supervisor = True
    code_bytes = 2400

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        m, k, n = (sizes.state(s).astype(np.float64) for s in ("m", "k", "n"))
        dtype = cls.fields["in"].type
        macs = MACS_PER_CYCLE.get(dtype.name if dtype else "float", MACS_PER_CYCLE["float"])
        return SUPERVISOR_OVERHEAD_CYCLES + m * n * k / macs

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        m, k, n = (sizes.state(s).astype(np.int64) for s in ("m", "k", "n"))
        return 2 * m * n * k


def _blocks_in_place(batch: VertexBatch, m: np.ndarray, k: np.ndarray, n: np.ndarray) -> bool:
    """Each vertex's product straight from and into engine memory when its edges are
    blocks of matrices (the planner's layout): no gathered copies of the operands."""
    views = [batch.vertex_views(f) for f in ("in", "weights", "out")]
    if any(v is None for v in views):
        return False
    shapes = np.stack([m, k, m, n, k, n], axis=1).tolist()
    blocks = []
    for (a, b, o), (m0, k0, m1, n1, k1, n2) in zip(zip(*views, strict=True), shapes, strict=True):
        a, b, o = _matrix(a, m0, k0), _matrix(b, k1, n2), _matrix(o, m1, n1)
        if a is None or b is None or o is None:
            return False
        blocks.append((a, b, o))
    for a, b, o in _stacked(_side_by_side(blocks)):
        np.matmul(a, b, out=o)
    return True


def _address(view: np.ndarray) -> int:
    return view.__array_interface__["data"][0]


def _side_by_side(
    blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Join vertices that multiply the same ``in`` block by column blocks of ``weights``
    lying side by side into outputs side by side: one larger product computes the same
    elements (and numpy multiplies larger matrices faster than many small ones)."""
    blocks = sorted(blocks, key=lambda t: (_address(t[0]), t[0].shape, _address(t[1])))
    joined: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for a, b, o in blocks:
        if joined:
            pa, pb, po = joined[-1]
            wb, wo = _widened(pb, b), _widened(po, o)
            if (
                _address(pa) == _address(a)
                and pa.shape == a.shape
                and pa.strides == a.strides
                and wb is not None
                and wo is not None
            ):
                joined[-1] = (pa, wb, wo)
                continue
        joined.append((a, b, o))
    return joined


def _stacked(
    blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Join products by the same ``weights`` block of ``in`` blocks one under the other
    into outputs one under the other (the row-wise counterpart of ``_side_by_side``)."""
    blocks = sorted(blocks, key=lambda t: (_address(t[1]), t[1].shape, _address(t[0])))
    joined: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for a, b, o in blocks:
        if joined:
            pa, pb, po = joined[-1]
            ta, to = _lengthened(pa, a), _lengthened(po, o)
            same_b = _address(pb) == _address(b) and pb.shape == b.shape and pb.strides == b.strides
            if same_b and ta is not None and to is not None:
                joined[-1] = (ta, pb, to)
                continue
        joined.append((a, b, o))
    return joined


def _lengthened(top: np.ndarray, bottom: np.ndarray) -> np.ndarray | None:
    """``top`` and ``bottom`` as one view when ``bottom``'s rows continue ``top``'s."""
    rows, width = top.shape
    if (
        bottom.shape[1] != width
        or bottom.strides != top.strides
        or (bottom.shape[0] > 1 and rows > 0 and top.strides[0] == 0)
        or _address(bottom) != _address(top) + rows * top.strides[0]
    ):
        return None
    return np.lib.stride_tricks.as_strided(
        top, shape=(rows + bottom.shape[0], width), strides=top.strides, writeable=True
    )


def _widened(left: np.ndarray, right: np.ndarray) -> np.ndarray | None:
    """``left`` and ``right`` as one view when ``right`` continues ``left``'s rows."""
    rows, width = left.shape
    item = left.itemsize
    if (
        right.shape[0] != rows
        or right.strides != left.strides
        or left.strides[1] != item
        or _address(right) != _address(left) + width * item
        or (rows > 1 and left.strides[0] < (width + right.shape[1]) * item)
    ):
        return None
    return np.lib.stride_tricks.as_strided(
        left, shape=(rows, width + right.shape[1]), strides=left.strides, writeable=True
    )


def _matrix(view: np.ndarray, rows: int, cols: int) -> np.ndarray | None:
    """``view`` as a [rows, cols] view of the same memory, if it is one."""
    if view.shape == (rows, cols):
        return view
    if view.flags.c_contiguous and view.size == rows * cols:
        return view.reshape(rows, cols)
    return None


@functools.cache
def matmul_partial(dtype: Type) -> type[Vertex]:
    def compute_batch(cls: type, batch: VertexBatch) -> None:
        m, k, n = (batch.state(s).astype(np.int64) for s in ("m", "k", "n"))
        if _blocks_in_place(batch, m, k, n):
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
            prod = np.matmul(a[a_idx].reshape(-1, mm, kk), b[b_idx].reshape(-1, kk, nn))
            out[o_idx] = prod.reshape(len(sel), mm * nn)

    cls = type(
        "MatMulPartial",
        (MatMulPartialVertex,),
        {
            "in_": Input(dtype),
            "weights": Input(dtype),
            "out": Output(dtype),
            "m": State(UNSIGNED_INT, 1),
            "k": State(UNSIGNED_INT, 1),
            "n": State(UNSIGNED_INT, 1),
            "type_name": f"poplin::MatMulPartial<{dtype.name},{dtype.name}>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)
