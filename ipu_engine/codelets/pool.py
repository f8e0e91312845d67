"""The pooling codelet: one tile's share of a max or average pool -- some output rows of
one image, some channels. Vertices of equal sizes run as one batched numpy call."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets.alike_edges import alike_vertices
from ipu_engine.codelets.conv_grouped import alike_edges
from ipu_engine.codelets.reduce import ReduceVertex
from ipu_engine.common.types import UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = (
    "outRows",  # output rows of the image this vertex computes
    "inRows",  # input rows it reads (its windows' rows, clipped to the image)
    "width",  # input width
    "outWidth",
    "chans",  # channels of its share
    "kernelH",
    "kernelW",
    "strideH",
    "strideW",
    "padTop",  # padding rows above its first input row (counted by count_include_pad)
    "padBottom",  # padding rows below its last input row that count_include_pad counts
    "padLeft",
    "padRight",
    "countPad",  # 1: an average divides by the padded cells too
)


class PoolVertex(Vertex):
    """Each output is a reduction of its window's cells: the cost of a reduce vertex whose
    partials are the windows' cells."""

    supervisor = True
    code_bytes = 900

    @classmethod
    def _cells(cls, sizes: VertexSizes) -> np.ndarray:
        names = ("outRows", "outWidth", "chans", "kernelH", "kernelW")
        return np.prod([sizes.state(k).astype(np.float64) for k in names], axis=0)

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        return (
            SUPERVISOR_OVERHEAD_CYCLES
            + cls._cells(sizes) * ReduceVertex.cycles_per_partial
            + sizes.elements("out") * 4
        )

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return cls._cells(sizes).astype(np.int64)


def _pool_alike(x: np.ndarray, g: dict[str, int], kind: str) -> np.ndarray:
    """Vertices of one size: x [V, inRows, width, C] -> [V, outRows, outWidth, C]."""
    rows, cols, kh, kw = g["outRows"], g["outWidth"], g["kernelH"], g["kernelW"]
    sh, sw = g["strideH"], g["strideW"]
    need_h, need_w = (rows - 1) * sh + kh, (cols - 1) * sw + kw
    top, left = g["padTop"], g["padLeft"]
    fill = -np.inf if kind == "max" else 0.0
    grid = np.full((x.shape[0], need_h, need_w, x.shape[3]), fill, dtype=np.float32)
    # the image's cells; padding, and cells past it (ceil_mode), hold the fill
    h, w = min(g["inRows"], need_h - top), min(g["width"], need_w - left)
    grid[:, top : top + h, left : left + w] = x[:, :h, :w]
    # which cells an average counts: the image's, and with countPad the padding's
    counted = np.zeros((need_h, need_w), dtype=np.float32)
    if g["countPad"]:
        counted[: top + h + g["padBottom"], : left + w + g["padRight"]] = 1.0
    else:
        counted[top : top + h, left : left + w] = 1.0
    reduce = np.maximum if kind == "max" else np.add
    acc = None
    count = np.zeros((rows, cols), dtype=np.float32)
    for a in range(kh):
        for b in range(kw):
            window = (slice(a, a + (rows - 1) * sh + 1, sh), slice(b, b + (cols - 1) * sw + 1, sw))
            cells = grid[:, window[0], window[1]]
            acc = cells.copy() if acc is None else reduce(acc, cells, out=acc)
            count += counted[window]
    assert acc is not None
    return acc if kind == "max" else acc / count[None, :, :, None]


@functools.cache
def pool_codelet(kind: str, dtype: Type) -> type[Vertex]:
    """``kind`` "max" or "avg" pooling of ``dtype`` (half computes in float)."""

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        # each group's edges read and written where they are: a strided view of memory
        # over a grid of its vertices, else one index found once per compiled compute set
        # (every group writes memory itself: none is gathered and stored back)
        for g, sel in alike_vertices(batch, _STATE):
            shapes = {
                "in": (g["inRows"], g["width"], g["chans"]),
                "out": (g["outRows"], g["outWidth"], g["chans"]),
            }
            found = alike_edges(batch, sel, g, ("in", "out"), False, shapes)
            x = found.edges["in"].read(batch.pool("in"), found.grid)
            x = x.reshape(sel.size, *shapes["in"]).astype(np.float32)
            y = _pool_alike(x, g, kind).reshape(*found.grid, *shapes["out"])
            out = found.edges["out"]
            if out.view is not None:  # rounded to the output's type as it is written
                out.read(batch.pool("out"), found.grid)[...] = y
            else:
                assert out.index is not None
                batch.pool("out")[out.index] = y

    name = "MaxPooling" if kind == "max" else "SumPooling"
    attrs = {
        "in_": Input(dtype),
        "out": Output(dtype),
        "type_name": f"popnn::{name}<{dtype.name}>",
        "compute_batch": classmethod(compute_batch),
    }
    attrs.update({k: State(UNSIGNED_INT, 0) for k in _STATE})
    return register_builtin(type(name, (PoolVertex,), attrs))
