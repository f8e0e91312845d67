"""The convolution codelet's batched paths against its per-vertex path: the same outputs and
the same cycle estimates.

The per-vertex path is the codelet's own ``_compute_alike`` called once per vertex (a
selection of one), as a vertex computes alone: kernel position by kernel position, its
window times its weights. A depthwise group's batched sums are the same products added
in the same order, so equal to the bit. A grid's products are one BLAS product per block of
vertices instead of one per kernel position and vertex: OpenBLAS rounds an element's sum
differently for products of other shapes (in the last bit, for most random shapes), so
there the comparison is at float32 rounding -- as it was before the grid was batched.
Shapes are random, seeded: uneven splits over tiles, padding, strides, dilations,
groups, channel multipliers, NHWC and NCHW inputs."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import Graph, IPUModel, Sequence, poplin, poputil
from ipu_engine.codelets import conv as conv_codelet
from ipu_engine.codelets import conv_grouped
from ipu_engine.common.types import as_type
from tests.ipu_engine.conftest import run_program
from tests.ipu_engine.test_conv_groups import reference_conv

SEEDS = range(8)


def _case(seed: int, depthwise: bool) -> dict:
    """A random convolution: NHWC input, weights [KH, KW, C / groups, F], bias, options."""
    rng = np.random.default_rng(1000 + seed)
    groups = int(rng.integers(2, 9))
    per_group_in = 1 if depthwise else int(rng.integers(2, 6))
    multiplier = int(rng.integers(1, 3)) if depthwise else int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pads = tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(2))
    h = int(rng.integers(dh * (kh - 1) + 1, 15))
    w = int(rng.integers(dw * (kw - 1) + 1, 15))
    n = int(rng.integers(1, 3))
    return {
        "x": rng.standard_normal((n, h, w, groups * per_group_in)).astype(np.float32),
        "w": rng.standard_normal((kh, kw, per_group_in, groups * multiplier)).astype(np.float32),
        "b": rng.standard_normal(groups * multiplier).astype(np.float32),
        "kwargs": {"groups": groups, "stride": (sh, sw), "padding": pads, "dilation": (dh, dw)},
        "nchw": bool(rng.integers(0, 2)),
        "tiles": int(rng.choice([7, 13, 29, 64])),  # splits that do not divide evenly
    }


def _run(case: dict):
    """(engine, output NHWC) of poplin.convolution on ``case``."""
    device = IPUModel("ipu2", tiles_per_ipu=case["tiles"]).create_device()
    graph = Graph(device.target)
    x = case["x"].transpose(0, 3, 1, 2).copy() if case["nchw"] else case["x"]
    inputs = {"x": x, "w": case["w"], "b": case["b"]}
    tensors = {}
    for name, value in inputs.items():
        tensors[name] = graph.add_variable(as_type(value.dtype), list(value.shape), name)
        poputil.map_tensor_linearly(graph, tensors[name])
        graph.create_host_write(name, tensors[name])
    prog = Sequence()
    image = tensors["x"].dim_shuffle([0, 2, 3, 1]) if case["nchw"] else tensors["x"]
    y = poplin.convolution(
        graph, image, tensors["w"], prog, "y", bias=tensors["b"], **case["kwargs"]
    )
    graph.create_host_read("y", y)
    engine, out = run_program(graph, device, prog, inputs, ["y"])
    return engine, out["y"]


@pytest.fixture
def per_vertex(monkeypatch):
    """Switch the codelet to its per-vertex path; returns the vertices it ran."""
    ran = []
    real = conv_codelet._compute_alike

    def one_by_one(batch, sel, g, with_bias, partials, channel_major, in_place):
        for vertex in sel:
            real(batch, np.array([vertex]), g, with_bias, partials, channel_major, in_place)
            ran.append(int(vertex))

    def enable() -> list[int]:
        monkeypatch.setattr(conv_codelet, "_path", lambda *args: ("vertex", None))
        monkeypatch.setattr(conv_codelet, "_compute_alike", one_by_one)
        return ran

    return enable


def _conv_vertices(engine) -> int:
    blocks = engine.graph.vertex_blocks
    return sum(b.count for b in blocks if "ConvPartial" in b.codelet.type_name)


def _batched(monkeypatch) -> list[str]:
    """Spy on which batched path each group of alike vertices takes."""
    taken: list[str] = []
    real_alike, real_grid = conv_codelet.run_alike, conv_codelet.run_grid

    def alike(*args):
        taken.append("batched")
        real_alike(*args)

    def grid(*args):
        taken.append("grid")
        real_grid(*args)

    monkeypatch.setattr(conv_codelet, "run_alike", alike)
    monkeypatch.setattr(conv_codelet, "run_grid", grid)
    return taken


@pytest.mark.parametrize("seed", SEEDS)
def test_depthwise_batched_sums_equal_the_per_vertex_sums_to_the_bit(
    seed, monkeypatch, per_vertex
) -> None:
    case = _case(seed, depthwise=True)
    taken = _batched(monkeypatch)
    _, batched = _run(case)
    assert taken and set(taken) == {"batched"}
    ran = per_vertex()
    engine, alone = _run(case)
    assert len(ran) == _conv_vertices(engine)  # every vertex on its own
    np.testing.assert_array_equal(batched, alone)
    want = reference_conv(case["x"], case["w"], **_reference_args(case), bias=case["b"])
    np.testing.assert_allclose(batched, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_grid_products_equal_the_per_vertex_products_at_float32_rounding(
    seed, monkeypatch, per_vertex
) -> None:
    case = _case(seed, depthwise=False)
    taken = _batched(monkeypatch)
    _, batched = _run(case)
    assert taken
    per_vertex()
    _, alone = _run(case)
    scale = float(np.max(np.abs(alone)))
    np.testing.assert_allclose(batched, alone, rtol=0, atol=2e-6 * scale)
    want = reference_conv(case["x"], case["w"], **_reference_args(case), bias=case["b"])
    np.testing.assert_allclose(batched, want, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("seed", SEEDS[:4])
@pytest.mark.parametrize("depthwise", [True, False])
def test_cycle_estimates_of_a_compiled_convolution_do_not_depend_on_its_path(
    seed, depthwise, per_vertex
) -> None:
    """Per step and tile, and per vertex: the batched path and the per-vertex path give
    the same estimates."""
    case = _case(seed, depthwise)
    batched_engine, _ = _run(case)
    per_vertex()
    alone_engine, _ = _run(case)
    want = alone_engine.model.step_cycles
    assert want.size and want.max() > 0
    np.testing.assert_array_equal(batched_engine.model.step_cycles, want)
    np.testing.assert_array_equal(batched_engine.last_run_steps, alone_engine.last_run_steps)
    blocks = zip(batched_engine.graph.vertex_blocks, alone_engine.graph.vertex_blocks, strict=True)
    for got, alone in blocks:
        assert got.codelet.type_name == alone.codelet.type_name
        if got.perf_estimate is not None or alone.perf_estimate is not None:
            np.testing.assert_array_equal(got.perf_estimate, alone.perf_estimate)


def _reference_args(case: dict) -> dict:
    kwargs = case["kwargs"]
    return {
        "stride": kwargs["stride"],
        "pads": kwargs["padding"],
        "dilation": kwargs["dilation"],
        "groups": kwargs["groups"],
    }


@pytest.mark.parametrize("nchw", [False, True])
@pytest.mark.parametrize("stride", [1, 2])
def test_row_blocks_of_one_image_are_summed_as_one_to_the_bit(
    nchw, stride, monkeypatch, per_vertex
) -> None:
    """A MobileNet-like depthwise layer over many tiles: its middle row blocks are one
    taller image (``conv_rows``), and its sums equal the per-vertex path's exactly."""
    merged = []
    real = conv_grouped.merged_row_blocks

    def spy(*args):
        found = real(*args)
        merged.append(found is not None)
        return found

    monkeypatch.setattr(conv_grouped, "merged_row_blocks", spy)
    rng = np.random.default_rng(39)
    case = {
        "x": rng.standard_normal((1, 28, 28, 16)).astype(np.float32),
        "w": rng.standard_normal((3, 3, 1, 16)).astype(np.float32),
        "b": rng.standard_normal(16).astype(np.float32),
        "kwargs": {"groups": 16, "stride": (stride, stride), "padding": ((1, 1), (1, 1)),
                   "dilation": (1, 1)},
        "nchw": nchw,
        "tiles": 128,
    }  # fmt: skip
    _, batched = _run(case)
    assert any(merged)
    per_vertex()
    _, alone = _run(case)
    np.testing.assert_array_equal(batched, alone)
