"""PopLibs' popnn::pooling: ``max_pool``, ``avg_pool`` and ``global_avg_pool`` of NHWC
tensors, with ONNX's MaxPool / AveragePool / GlobalAveragePool semantics.

The output is cut into blocks of an image's rows and of channels, one ``MaxPooling`` or
``SumPooling`` vertex per block, spread over the tiles; each vertex reads the input rows
its windows see. Padded cells never win a max; an average divides by the image's cells
in the window, or with ``count_include_pad`` by the padded ones too (not by cells past the
padding that ``ceil_mode`` adds). As PyTorch and ONNX, ``ceil_mode`` drops a last window
that would start in the bottom / right padding.
"""

from __future__ import annotations

import numpy as np

from ipu_engine import popops
from ipu_engine.codelets.pool import pool_codelet
from ipu_engine.codelets.reduce import ReduceVertex
from ipu_engine.common.arguments import flag_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import ComputeSet, EdgeColumn
from ipu_engine.poplin.conv_plan import Pair, _pads, _pair
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context
from ipu_engine.poputil.splits import split_counts


def pooled_size(size: int, kernel: int, stride: int, pads: Pair, ceil_mode: bool) -> int:
    """Output length of one spatial dimension (ONNX / PyTorch rule)."""
    span = size + pads[0] + pads[1] - kernel
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pads[0]:
        out -= 1  # the last window would start in the end padding
    return out


def _plan(n: int, oh: int, ow: int, c: int, kh: int, sh: int, w: int, num_tiles: int) -> tuple:
    """Rows and channels per block: fewest estimated cycles (window cells reduced plus the
    input rows received) with at most one block per tile."""
    sr, sc = (
        a.reshape(-1) for a in np.meshgrid(split_counts(oh, num_tiles), split_counts(c, num_tiles))
    )
    ok = n * sr * sc <= num_tiles
    if not ok.any():
        ok = (sr == 1) & (sc == 1)
    sr, sc = sr[ok], sc[ok]
    br, bc = -(-oh // sr), -(-c // sc)
    cells = br * ow * bc * ReduceVertex.cycles_per_partial
    received = ((br - 1) * sh + kh) * w * bc * 4 / C.EXCHANGE_BYTES_PER_CYCLE
    best = int(np.argmin(cells + received))
    return int(br[best]), int(bc[best])


def _pool(
    kind: str,
    graph: Graph,
    t: Tensor,
    kernel: int | tuple[int, int],
    stride: int | tuple[int, int] | None,
    padding: int | tuple,
    ceil_mode: bool,
    count_include_pad: bool,
    prog: SequenceProgram,
    debug_prefix: str,
) -> Tensor:
    api = "popnn::maxPool" if kind == "max" else "popnn::avgPool"
    check_tensors(graph, api, t)
    if t.rank != 4 or 0 in t.shape:
        raise ShapeError(f"{api}: {t.name!r} {t.shape} must be a non-empty [N, H, W, C] tensor")
    if t.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs float or half, {t.name!r} is {t.type!r}")
    try:
        kh, kw = _pair(kernel, "kernel", 1)
        sh, sw = _pair(kernel if stride is None else stride, "stride", 1)
        (pt, pb), (pl, pr) = _pads(padding)
    except ShapeError as error:
        raise ShapeError(str(error).replace("poplin::convolution", api)) from None
    ceil_mode = flag_arg(ceil_mode, f"{api}: ceil_mode", ShapeError)
    count_include_pad = flag_arg(count_include_pad, f"{api}: count_include_pad", ShapeError)
    if max(pt, pb) >= kh or max(pl, pr) >= kw:
        raise ShapeError(
            f"{api}: padding {((pt, pb), (pl, pr))} of {t.name!r} must be smaller than the "
            f"kernel {(kh, kw)}: a window of padding only has nothing to pool"
        )
    n, h, w, c = t.shape
    oh = pooled_size(h, kh, sh, (pt, pb), ceil_mode)
    ow = pooled_size(w, kw, sw, (pl, pr), ceil_mode)
    if oh < 1 or ow < 1:
        raise ShapeError(f"{api}: kernel {(kh, kw)} is larger than {t.name!r} {t.shape} padded")
    rows, chans = _plan(n, oh, ow, c, kh, sh, w, len(graph.tile_range))
    args = {
        "in": list(t.shape), "kernel": [kh, kw], "stride": [sh, sw],
        "padding": [[pt, pb], [pl, pr]], "ceil_mode": bool(ceil_mode),
        "count_include_pad": bool(count_include_pad), "plan": [rows, chans],
    }  # fmt: skip
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(t.type, [n, oh, ow, c], debug_prefix or f"{kind}_pool")
        geometry = (kh, kw, sh, sw, pt, pb, pl, pr)
        cs = _build(graph, kind, t, out, geometry, rows, chans, bool(count_include_pad))
        add_program(prog, Execute(cs), debug_id)
    return out


def _build(graph, kind, t, out, geometry, rows, chans, count_pad) -> ComputeSet:  # noqa: ANN001
    kh, kw, sh, sw, pt, pb, pl, pr = geometry
    n, h, w, c = t.shape
    oh, ow = out.shape[1], out.shape[2]
    grid = np.stack(
        np.meshgrid(np.arange(n), np.arange(0, oh, rows), np.arange(0, c, chans), indexing="ij"),
        axis=-1,
    ).reshape(-1, 3)
    img, r0, c0 = grid[:, 0], grid[:, 1], grid[:, 2]
    r1, c1 = np.minimum(r0 + rows, oh), np.minimum(c0 + chans, c)
    # the windows' rows in padded coordinates, then the image rows among them
    p0, p1 = r0 * sh, (r1 - 1) * sh + kh
    ih0, ih1 = np.maximum(p0 - pt, 0), np.minimum(p1 - pt, h)
    count = grid.shape[0]
    tiles_avail = graph.tile_range
    tiles = (tiles_avail.start + np.arange(count) * len(tiles_avail) // count).astype(np.int32)
    pixels = t.reshape([n * h * w, c])
    in_col = EdgeColumn.from_blocks(pixels, (img * h + ih0) * w, (img * h + ih1) * w, c0, c1)
    out_rows = out.reshape([n * oh * ow, c])
    first, last = (img * oh + r0) * ow, (img * oh + r1) * ow
    out_col = EdgeColumn.from_blocks(out_rows, first, last, c0, c1)
    out_tiles = np.zeros((n * oh * ow, c), dtype=np.int32)
    for i in range(count):  # each output block on its vertex's tile
        out_tiles[first[i] : last[i], c0[i] : c1[i]] = tiles[i]
    graph.set_tile_mapping_array(out, out_tiles)
    # padding the windows see right of the image: counted up to the right pad only
    need_w = (ow - 1) * sw + kw
    right = max(0, min(need_w, pl + w + pr) - (pl + w))
    cs = graph.add_compute_set("Pool")
    codelet = pool_codelet(kind, t.type)
    block = graph.add_vertex_block(cs, codelet, tiles, {"in": in_col, "out": out_col})
    state = {
        "outRows": r1 - r0, "inRows": ih1 - ih0, "width": w, "outWidth": ow, "chans": c1 - c0,
        "kernelH": kh, "kernelW": kw, "strideH": sh, "strideW": sw,
        "padTop": np.maximum(pt - p0, 0),
        "padBottom": np.maximum(0, np.minimum(p1, pt + h + pb) - np.maximum(p0, pt + h)),
        "padLeft": pl, "padRight": right, "countPad": int(count_pad),
    }  # fmt: skip
    for name, values in state.items():
        block.state[name][:] = np.broadcast_to(values, (count,)).astype(np.uint32)
    return cs


def max_pool(
    graph: Graph,
    t: Tensor,
    kernel: int | tuple[int, int],
    prog: SequenceProgram,
    debug_prefix: str = "",
    *,
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple = 0,
    ceil_mode: bool = False,
) -> Tensor:
    """Max of each ``kernel`` window of ``t`` [N, H, W, C] (ONNX MaxPool): a new tensor
    [N, OH, OW, C]. ``stride`` defaults to the kernel; ``padding`` is p, (ph, pw) or
    ((top, bottom), (left, right))."""
    return _pool("max", graph, t, kernel, stride, padding, ceil_mode, False, prog, debug_prefix)


def avg_pool(
    graph: Graph,
    t: Tensor,
    kernel: int | tuple[int, int],
    prog: SequenceProgram,
    debug_prefix: str = "",
    *,
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
) -> Tensor:
    """Mean of each ``kernel`` window of ``t`` [N, H, W, C] (ONNX AveragePool, whose
    ``count_include_pad`` defaults to 0: padded cells are not counted)."""
    return _pool(
        "avg", graph, t, kernel, stride, padding, ceil_mode, count_include_pad, prog, debug_prefix
    )


def global_avg_pool(
    graph: Graph, t: Tensor, prog: SequenceProgram, debug_prefix: str = ""
) -> Tensor:
    """Mean over H and W of ``t`` [N, H, W, C], kept as [N, 1, 1, C] (ONNX
    GlobalAveragePool): a ``popops.reduce`` scaled by 1 / (H * W)."""
    api = "popnn::globalAvgPool"
    check_tensors(graph, api, t)
    if t.rank != 4 or 0 in t.shape:
        raise ShapeError(f"{api}: {t.name!r} {t.shape} must be a non-empty [N, H, W, C] tensor")
    if t.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs float or half, {t.name!r} is {t.type!r}")
    n, h, w, c = t.shape
    with op_context(graph, api, debug_prefix, {"in": list(t.shape)}):
        mean = popops.reduce(
            graph, t, [1, 2], "add", prog, debug_prefix or "global_avg_pool", scale=1.0 / (h * w)
        )
    return mean.reshape([n, 1, 1, c])
