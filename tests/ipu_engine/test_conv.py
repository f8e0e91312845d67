"""poplin.convolution against a direct numpy convolution, over plans that split rows,
output channels and input channels (partials reduced), with strides and padding."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ipu_engine import FLOAT, Graph, IPUModel, Sequence, poplin, poputil
from ipu_engine.poplin import ConvShape, plan_convolution
from profiler_core.formats.profile_pop.reader import ProfileReader
from tests.conftest import run_example_with_reports
from tests.ipu_engine.conftest import run_program


def direct_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """out[n, i, j, f] = sum over (a, b, c) of xpad[n, i*s + a, j*s + b, c] * w[a, b, c, f]."""
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, oh, ow, f))
    for a in range(kh):
        for b in range(kw):
            patch = xp[:, a : a + stride * oh : stride, b : b + stride * ow : stride, :]
            out += patch @ w[a, b].astype(np.float64)
    return out


@pytest.mark.parametrize(
    ("shape", "kernel", "stride", "pad", "proportion"),
    [
        ((2, 9, 7, 6), (3, 3, 5), 1, 1, 0.6),
        ((1, 10, 10, 8), (3, 3, 4), 2, 1, 0.6),
        ((2, 8, 6, 12), (1, 1, 10), 1, 0, 0.6),
        ((1, 12, 9, 16), (3, 3, 6), 1, 1, 0.002),  # a tight budget: serial output channels
    ],
)
def test_convolution_equals_numpy(shape, kernel, stride, pad, proportion) -> None:
    device = IPUModel("ipu2", tiles_per_ipu=32).create_device()
    graph = Graph(device.target)
    kh, kw, f = kernel
    x = graph.add_variable(FLOAT, list(shape), "x")
    w = graph.add_variable(FLOAT, [kh, kw, shape[3], f], "w")
    for name, t in (("x", x), ("w", w)):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
    prog = Sequence()
    options = {"availableMemoryProportion": proportion}
    y = poplin.convolution(graph, x, w, prog, "y", stride=stride, padding=pad, options=options)
    graph.create_host_read("y", y)
    rng = np.random.default_rng(2)
    values = {
        "x": rng.standard_normal(shape).astype(np.float32),
        "w": rng.standard_normal((kh, kw, shape[3], f)).astype(np.float32),
    }
    _, out = run_program(graph, device, prog, values, reads=["y"])
    expected = direct_conv(values["x"], values["w"], stride, pad)
    assert out["y"].shape == expected.shape
    assert np.max(np.abs(out["y"] - expected)) <= 1e-4 * np.max(np.abs(expected))


def test_a_tight_budget_serialises_the_output_channels() -> None:
    """0.2% of a tile is 1,277.952 bytes: the fastest parallel plan needs more, so the
    planner computes the 6 output channels in serial slices whose temporaries fit."""
    shape = ConvShape(1, 12, 9, 16, 6, 3, 3, 1, 1)
    budget = 0.002 * 638976
    loose = plan_convolution(shape, 4, "float", 32, 638976, 0.6)
    tight = plan_convolution(shape, 4, "float", 32, 638976, 0.002)
    assert loose.fits_budget and loose.serial == 1 and loose.temp_bytes > budget
    assert tight.fits_budget and tight.temp_bytes <= budget
    assert tight.serial > 1 and tight.serial * tight.slice_chans >= 6
    # one slice's temporaries by hand: the input rows and weights a tile receives, and
    # its float partials
    in_rows = min((tight.rows - 1) * 1 + 3, 12)
    operands = (in_rows * 9 * tight.in_chans + 3 * 3 * tight.in_chans * tight.out_chans) * 4
    assert tight.temp_bytes == operands + tight.rows * 9 * tight.out_chans * 4
    assert tight.cycles > loose.cycles


def test_resnet_stage_example_equals_numpy(tmp_path: Path) -> None:
    args = ("--batch", "1", "--size", "10", "--width", "8")
    result = run_example_with_reports("resnet_conv_stage.py", tmp_path, *args)
    error = float(re.search(r"max relative error vs numpy (\S+)", result.stdout).group(1))
    assert error <= 1e-4
    with ProfileReader(tmp_path / "resnet_stage" / "profile.pop") as r:
        names = [r.graph.strings[int(i)] for i in r.graph.vt_name]
        counts = r.graph.vc_count
        types = r.graph.vc_type
    conv_type = names.index("poplin::ConvPartialnx1<float,float>")
    assert counts[types == conv_type].sum() > 0  # the report shows the conv vertices


def _conv_of_layout(nchw: bool, proportion: float):
    """A strided convolution of a [1, 12, 8, 11] (NHWC) image kept NCHW (seen as NHWC through a
    dim shuffle, as ONNX models arrive) or NHWC; its engine, output and input values."""
    device = IPUModel("ipu2", tiles_per_ipu=32).create_device()
    graph = Graph(device.target)
    shape = (1, 12, 8, 11)
    x = graph.add_variable(FLOAT, [1, 11, 12, 8] if nchw else list(shape), "x")
    w = graph.add_variable(FLOAT, [3, 3, 11, 7], "w")
    for name, t in (("x", x), ("w", w)):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
    prog = Sequence()
    nhwc = x.dim_shuffle([0, 2, 3, 1]) if nchw else x
    options = {"availableMemoryProportion": proportion}
    y = poplin.convolution(graph, nhwc, w, prog, "y", stride=2, padding=1, options=options)
    graph.create_host_read("y", y)
    rng = np.random.default_rng(5)
    image = rng.standard_normal(shape).astype(np.float32)  # NHWC
    values = {
        "x": image.transpose(0, 3, 1, 2).copy() if nchw else image,
        "w": rng.standard_normal((3, 3, 11, 7)).astype(np.float32),
    }
    engine, out = run_program(graph, device, prog, values, reads=["y"])
    return graph, engine, out["y"], direct_conv(image, values["w"], 2, 1)


@pytest.mark.parametrize("proportion", [0.6, 0.002])
def test_an_nchw_input_is_read_channel_by_channel_as_runs(proportion) -> None:
    """An NCHW activation seen as NHWC has one address per element in pixel order, but
    runs of pixels per channel: the vertices read it channel by channel (each edge a run
    per channel, not an address per element), with the same result and the same cycles
    as the convolution of an NHWC image."""
    graph, engine, y, expected = _conv_of_layout(True, proportion)
    assert np.max(np.abs(y - expected)) <= 1e-4 * np.max(np.abs(expected))
    blocks = [b for b in graph.vertex_blocks if "ConvPartial" in b.codelet.type_name]
    assert blocks and all(b.codelet.channel_major for b in blocks)
    for b in blocks:
        edge = b.edges["in"]
        assert edge.runs is not None and len(edge.runs) * 4 <= edge.size
        # each vertex's edge: its input channels' runs of the pixels it sees
        assert np.all(np.diff(edge.run_offsets) == b.state["inChans"] * b.state["groups"])
    _, nhwc_engine, nhwc_y, _ = _conv_of_layout(False, proportion)
    np.testing.assert_array_equal(y, nhwc_y)
    conv_cycles = [
        {k: v.cycles.sum() for k, v in e.model.cs_cycles.items()} for e in (engine, nhwc_engine)
    ]
    assert conv_cycles[0] == conv_cycles[1]
