"""Depthwise and grouped convolutions as one batched product per group of alike vertices
(``codelets/conv_grouped.py``), not one product per vertex: against numpy's convolution
(``reference_conv``, float64 einsum over windows), through poplin.convolution with NHWC and
NCHW inputs, strides, dilations, channel multipliers, wide pads, half inputs, and inputs
whose edges are no strided view of memory (gathered instead)."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import concat, poplin
from ipu_engine.codelets import conv as conv_codelet
from ipu_engine.codelets import conv_grouped
from ipu_engine.codelets.conv_grouped import vertex_grid
from tests.ipu_engine.conv_reruns import conv_reruns, runner_caches
from tests.ipu_engine.op_harness import run_op
from tests.ipu_engine.test_conv_groups import close, reference_conv

RNG = np.random.default_rng(39)


@pytest.fixture
def runs(monkeypatch) -> dict[str, list]:
    """Each batched product (vertices, grid, edges) and each grid the codelet runs."""
    seen: dict[str, list] = {"batched": [], "grid": []}
    real_batched, real_grid = conv_codelet.run_alike, conv_codelet.run_grid

    def batched(batch, sel, g, with_bias, channel_major, direct):
        real_batched(batch, sel, g, with_bias, channel_major, direct)
        names = ("in", "weights", "out") + (("bias",) if with_bias else ())
        found = conv_grouped.alike_edges(batch, sel, g, names, channel_major)
        seen["batched"].append({"vertices": sel.size, "found": found})

    def grid(batch, grid, sel, *args):
        seen["grid"].append(sel.size)
        real_grid(batch, grid, sel, *args)

    monkeypatch.setattr(conv_codelet, "run_alike", batched)
    monkeypatch.setattr(conv_codelet, "run_grid", grid)
    return seen


def _convolve(x, w, bias=None, nchw=False, tiles=64, **kwargs) -> np.ndarray:
    """poplin.convolution of NHWC ``x`` (stored NCHW and seen as NHWC when ``nchw``)."""
    inputs = {"x": x.transpose(0, 3, 1, 2).copy() if nchw else x, "w": w}
    if bias is not None:
        inputs["b"] = bias

    def build(graph, t, prog):
        image = t["x"].dim_shuffle([0, 2, 3, 1]) if nchw else t["x"]
        return poplin.convolution(graph, image, t["w"], prog, "y", bias=t.get("b"), **kwargs)

    return run_op(build, inputs, tiles)[1]["out"]


def _vertices(seen: dict[str, list]) -> int:
    return sum(r["vertices"] for r in seen["batched"])


@pytest.mark.parametrize("nchw", [False, True])
@pytest.mark.parametrize("stride", [1, 2])
def test_a_mobilenet_depthwise_layer_is_a_few_batched_products(runs, nchw, stride) -> None:
    """16 channels, 3x3, pad 1, bias: every vertex in a batched product, one per size of
    vertex (first, middle, last row blocks), each edge a strided view of memory."""
    x = RNG.standard_normal((1, 14, 14, 16)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 1, 16)).astype(np.float32)
    b = RNG.standard_normal(16).astype(np.float32)
    got = _convolve(x, w, b, nchw, groups=16, stride=stride, padding=1)
    want = reference_conv(x, w, (stride, stride), ((1, 1), (1, 1)), (1, 1), 16, b)
    assert close(got, want, 1e-6)
    assert not runs["grid"] and 1 <= len(runs["batched"]) <= 4
    assert _vertices(runs) > 16  # more vertices than products
    for run in runs["batched"]:
        assert all(edge.view is not None for edge in run["found"].edges.values())
        assert int(np.prod(run["found"].grid)) == run["vertices"]


@pytest.mark.parametrize(
    ("xs", "ws", "groups", "stride", "pads", "dilation"),
    [
        ((2, 9, 11, 6), (3, 3, 1, 12), 6, (1, 1), ((1, 1), (1, 1)), (1, 1)),  # multiplier 2
        ((1, 12, 10, 5), (3, 3, 1, 5), 5, (1, 1), ((2, 2), (2, 2)), (2, 2)),  # dilation 2
        ((1, 7, 9, 4), (5, 3, 1, 4), 4, (2, 1), ((2, 1), (0, 1)), (1, 1)),  # 5x3, asymmetric
        ((1, 3, 3, 3), (1, 1, 1, 3), 3, (1, 1), ((2, 2), (3, 1)), (1, 1)),  # pads > kernel
        ((1, 10, 10, 32), (3, 3, 4, 32), 8, (1, 1), ((1, 1), (1, 1)), (1, 1)),  # grouped, C=4
        ((2, 8, 8, 64), (3, 3, 2, 64), 32, (2, 2), ((1, 1), (1, 1)), (1, 1)),  # grouped, C=2
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_grouped_convolutions_in_batched_products_equal_numpy(
    runs, xs, ws, groups, stride, pads, dilation, dtype
) -> None:
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[3]).astype(dtype)
    kwargs = {"groups": groups, "stride": stride, "padding": pads, "dilation": dilation}
    got = _convolve(x, w, b, **kwargs)
    want = reference_conv(x, w, stride, pads, dilation, groups, b)
    assert got.dtype == dtype
    assert close(got, want, 1e-5 if dtype == np.float32 else 2e-3)
    assert runs["batched"]  # half inputs, float partials: batched too


def test_an_input_that_is_no_strided_view_is_gathered(runs) -> None:
    """Channels joined from two variables in the other order than memory holds them: the
    depthwise vertices' inputs step back between the two, no strided view of memory, so
    they are gathered through one index each run."""
    x = RNG.standard_normal((1, 9, 9, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 1, 6)).astype(np.float32)
    inputs = {"a": np.ascontiguousarray(x[..., 3:]), "c": np.ascontiguousarray(x[..., :3])}
    inputs["w"] = w

    def build(graph, t, prog):
        joined = concat([t["c"], t["a"]], 3)
        return poplin.convolution(graph, joined, t["w"], prog, "y", groups=6, padding=1)

    got = run_op(build, inputs, 64)[1]["out"]
    assert close(got, reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 6), 1e-6)
    edges = [r["found"].edges["in"] for r in runs["batched"]]
    assert edges and any(e.index is not None for e in edges)


def test_half_partials_stay_vertex_by_vertex(runs) -> None:
    """Half partials round after every multiply-accumulate, in the vertex's order."""
    x = RNG.standard_normal((1, 6, 6, 4)).astype(np.float16)
    w = RNG.standard_normal((3, 3, 1, 4)).astype(np.float16)
    got = _convolve(x, w, groups=4, padding=1, options={"partialsType": "half"})
    assert not runs["batched"] and not runs["grid"]
    assert close(got, reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 4), 2e-2)


def test_vertex_grid_finds_the_meshgrid_the_vertices_were_made_in() -> None:
    groups, blocks = np.meshgrid(np.arange(64), np.arange(17), indexing="ij")
    starts = np.stack(
        [groups * 3136 + blocks * 168 + 112, 200704 + groups, 216256 + blocks * 10752 + groups],
        axis=-1,
    ).reshape(-1, 3)
    assert vertex_grid(starts) == (64, 17)
    assert vertex_grid(starts[:17]) == (17,)
    assert vertex_grid(starts[:1]) == (1,)
    bent = starts.copy()
    bent[40, 0] += 1
    assert vertex_grid(bent) is None
    assert vertex_grid(starts[: 64 * 17 - 1]) is None  # not a whole grid


@pytest.mark.parametrize("nchw", [False, True])
def test_a_kept_depthwise_call_computes_every_run_from_memorys_values(nchw) -> None:
    """A depthwise group whose edges are views of memory keeps its kernel call from one run
    to the next (``run_alike``): a second run with new inputs, weights and biases computes
    from those."""
    shapes = {"x": (1, 16, 12, 12) if nchw else (1, 12, 12, 16), "w": (3, 3, 1, 16), "b": (16,)}
    engine = conv_reruns(shapes, 2, nchw=nchw, tiles_per_ipu=64, padding=1, groups=16)
    caches = runner_caches(engine)
    assert any(isinstance(k, tuple) and k[0] == "kept_depthwise" for c in caches for k in c)
