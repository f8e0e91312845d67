"""The grouped forms of poplin's ops with both plan options of PopLibs: ``partialsType``
(half products accumulated in float or half, partials kept in that type, the AMP rate) and
``availableMemoryProportion`` (serial slices when no parallel split fits). A grouped
convolution's serial slice takes the same output channels of every group; references are
numpy loops over each group's products, in the vertex's order where rounding matters."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import Engine, Graph, GraphError, IPUModel, Sequence, poplin, poputil
from ipu_engine.common.types import as_type
from ipu_engine.poplin import ConvShape, plan_convolution, plan_matmul
from profiler_core.report import open_report
from tests.ipu_engine.op_harness import op_contexts, run_op
from tests.ipu_engine.test_conv_groups import reference_conv

RNG = np.random.default_rng(2611)
TILE_BYTES = 638_976


def conv(x, w, bias=None, tiles=32, options=None):
    """``poplin.convolution`` of x by w in groups of x's channels / w's C, "same" padding."""
    groups = x.shape[3] // w.shape[2]
    inputs = {"x": x, "w": w} if bias is None else {"x": x, "w": w, "b": bias}

    def build(graph, t, prog):
        return poplin.convolution(
            graph, t["x"], t["w"], prog, "y", options=options, groups=groups, bias=t.get("b")
        )

    return run_op(build, inputs, tiles)


def half_steps_conv(x, w, bias=None) -> np.ndarray:
    """A stride-1 "same" grouped convolution accumulated in half, rounded after every
    multiply-accumulate in the order a vertex walks its patch: kernel row, kernel column,
    input channel of the group; the bias added to the half sum and rounded once more."""
    n, h, wd, c = x.shape
    kh, kw, cg, f = w.shape
    groups, fg = c // cg, f // (c // cg)
    xp = np.pad(x.astype(np.float32), ((0, 0), (kh // 2,) * 2, (kw // 2,) * 2, (0, 0)))
    out = np.zeros((n, h, wd, f), np.float16)
    for g in range(groups):
        for a in range(kh):
            for b in range(kw):
                for ch in range(cg):
                    pixels = xp[:, a : a + h, b : b + wd, g * cg + ch, None]
                    term = pixels * w[a, b, ch, g * fg : (g + 1) * fg].astype(np.float32)
                    total = out[..., g * fg : (g + 1) * fg].astype(np.float32) + term
                    out[..., g * fg : (g + 1) * fg] = total.astype(np.float16)
    if bias is not None:
        out = (out.astype(np.float32) + bias.astype(np.float32)).astype(np.float16)
    return out


def partials_variables(graph: Graph) -> list:
    return [v for v in graph.variables if v.name.endswith("partials")]


def convolve_sets(graph: Graph) -> list[str]:
    return [cs.name for cs in graph.compute_sets if cs.name.endswith("Convolve")]


# -- partialsType ------------------------------------------------------------------------------
GROUPED_X, GROUPED_W = (1, 5, 4, 8), (3, 3, 4, 6)  # 2 groups of 4 input, 3 output channels


def test_a_grouped_half_convolution_accumulates_in_the_partials_type() -> None:
    x = RNG.uniform(0, 4, GROUPED_X).astype(np.float16)
    w = RNG.uniform(0, 1, GROUPED_W).astype(np.float16)
    exact = reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 2)
    _, out = conv(x, w, tiles=1)  # one tile: one vertex walks every product of a pixel
    np.testing.assert_array_equal(out["out"], exact.astype(np.float16))
    graph, out = conv(x, w, tiles=1, options={"partialsType": "half"})
    steps = half_steps_conv(x, w)
    np.testing.assert_array_equal(out["out"], steps)
    assert np.any(steps != exact.astype(np.float16))  # the precisions do differ here
    (context,) = op_contexts(graph, "poplin::convolution")
    assert context.args["partialsType"] == "half"
    names = {b.codelet.type_name for cs in graph.compute_sets for b in cs.blocks}
    assert "poplin::ConvPartialnx1<half,half>" in names


@pytest.mark.parametrize(
    ("dtype", "partials", "macs_per_cycle"),
    [(np.float32, "float", 16), (np.float16, "float", 32), (np.float16, "half", 64)],
    ids=["float", "half-in-float-partials", "half-in-half-partials"],
)
def test_grouped_convolution_cycles_follow_the_amp_rate(tmp_path, dtype, partials, macs_per_cycle):
    """One tile, one vertex holding both groups: a supervisor's 100 cycles + its MACs --
    4x4 output pixels x 2 groups x 4 output channels x 3x3 taps x 4 input channels, 4,608
    -- at the AMP's rate for (input, partials) type."""
    device = IPUModel("ipu2", tiles_per_ipu=1).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(as_type(dtype), [1, 4, 4, 8], "x")
    w = graph.add_variable(as_type(dtype), [3, 3, 4, 8], "w")
    for t in (x, w):
        poputil.map_tensor_linearly(graph, t)
    prog = Sequence(name="conv")
    poplin.convolution(graph, x, w, prog, "y", options={"partialsType": partials}, groups=2)
    options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    engine = Engine(graph, prog, options=options)
    engine.load(device)
    engine.run(0)
    report = open_report(tmp_path / "conv")
    programs, names = report.programs, report.graph.strings
    convolve = [
        i
        for i, cs in enumerate(programs.step_cs.tolist())
        if cs >= 0 and names[int(report.graph.cs_name[cs])].endswith("Convolve")
    ]
    assert len(convolve) == 1
    assert programs.step_cycles[convolve[0]].tolist() == [100 + 4608 // macs_per_cycle]


@pytest.mark.parametrize(("partials", "size"), [("float", 4), ("half", 2)])
def test_grouped_matmul_keeps_split_k_partials_in_the_partials_type(partials, size) -> None:
    a = RNG.uniform(0, 2, (4, 8, 200)).astype(np.float16)
    b = RNG.uniform(0, 1, (4, 200, 6)).astype(np.float16)
    assert plan_matmul(8, 200, 6, 2, "half", 32, TILE_BYTES, 0.6, groups=4).sk > 1
    graph, out = run_op(
        lambda g, t, prog: poplin.mat_mul_grouped(
            g, t["a"], t["b"], prog, "ab", {"partialsType": partials}
        ),
        {"a": a, "b": b},
    )
    variables = partials_variables(graph)
    assert len(variables) == 1 and variables[0].type.size == size
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out["out"], want, rtol=4e-3)
    (context,) = op_contexts(graph, "poplin::matMulGrouped")
    assert context.args["partialsType"] == partials


def test_grouped_matmul_with_half_partials_rounds_every_step() -> None:
    a = RNG.uniform(0, 4, (3, 5, 64)).astype(np.float16)
    b = RNG.uniform(0, 1, (3, 64, 4)).astype(np.float16)

    def run(options):
        return run_op(
            lambda g, t, prog: poplin.mat_mul_grouped(g, t["a"], t["b"], prog, "ab", options),
            {"a": a, "b": b},
            tiles=1,
        )[1]["out"]

    acc = np.zeros((3, 5, 4), np.float16)
    for j in range(64):  # each group's sum over k, rounded to half after every step
        term = a[:, :, j, None].astype(np.float32) * b[:, None, j, :].astype(np.float32)
        acc = (acc.astype(np.float32) + term).astype(np.float16)
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(run({"partialsType": "half"}), acc)
    np.testing.assert_array_equal(run({}), exact)
    assert np.any(acc != exact)


# -- availableMemoryProportion: serial slices ---------------------------------------------------
def test_a_grouped_convolution_serialises_the_same_channels_of_every_group() -> None:
    """3 groups of 4 input and 8 output channels at 0.1% of a tile: 4 serial slices of 2
    channels per group, input channels split within each, bias added once."""
    x = RNG.standard_normal((1, 10, 9, 12)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4, 24)).astype(np.float32)
    bias = (RNG.standard_normal(24) * 10).astype(np.float32)
    shape = ConvShape(1, 10, 9, 12, 24, 3, 3, 1, 1, groups=3)
    plan = plan_convolution(shape, 4, "float", 32, TILE_BYTES, 0.001)
    loose = plan_convolution(shape, 4, "float", 32, TILE_BYTES, 0.6)
    assert loose.serial == 1 and loose.temp_bytes > 0.001 * TILE_BYTES
    assert plan.serial == 4 and plan.slice_chans == 2 and plan.in_chan_blocks > 1
    assert plan.fits_budget and plan.temp_bytes <= 0.001 * TILE_BYTES
    graph, out = conv(x, w, bias, options={"availableMemoryProportion": 0.001})
    want = reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 3, bias)
    assert float(np.max(np.abs(out["out"] - want))) <= 1e-5 * float(np.max(np.abs(want)))
    assert convolve_sets(graph) == [f"y/Conv/Serial_{i}/Convolve" for i in range(4)]
    assert len(partials_variables(graph)) == 4  # one per slice, freed before the next
    (context,) = op_contexts(graph, "poplin::convolution")
    assert context.args["serialSplit"] == 4
    assert context.args["availableMemoryProportion"] == 0.001
    assert context.args["tempBytesPerTile"] == plan.temp_bytes
    # every slice's vertices compute 2 channels of each of the 3 groups, per output row
    for cs in (c for c in graph.compute_sets if c.name.endswith("Convolve")):
        channels = sum(
            int((b.state["groups"] * b.state["outChans"] * b.state["outRows"]).sum())
            for b in cs.blocks
        )
        assert channels == 3 * 2 * 10 * plan.in_chan_blocks


def test_serial_slices_of_a_grouped_half_convolution_round_in_half_partials() -> None:
    """One tile, 2 groups of 3 output channels at 0.1%: 3 serial slices of one channel per
    group, each vertex accumulating in half as a whole-op vertex would, bias included."""
    x = RNG.uniform(0, 4, GROUPED_X).astype(np.float16)
    w = RNG.uniform(0, 1, GROUPED_W).astype(np.float16)
    bias = RNG.uniform(-8, 8, 6).astype(np.float16)
    options = {"partialsType": "half", "availableMemoryProportion": 0.001}
    shape = ConvShape(1, 5, 4, 8, 6, 3, 3, 1, 1, groups=2)
    assert plan_convolution(shape, 2, "half", 1, TILE_BYTES, 0.001).serial == 3
    graph, out = conv(x, w, bias, tiles=1, options=options)
    np.testing.assert_array_equal(out["out"], half_steps_conv(x, w, bias))
    assert len(convolve_sets(graph)) == 3


def test_serial_slices_of_a_grouped_half_convolution_keep_half_partials() -> None:
    x = RNG.uniform(-2, 2, (1, 10, 9, 12)).astype(np.float16)
    w = RNG.uniform(-1, 1, (3, 3, 4, 24)).astype(np.float16)
    shape = ConvShape(1, 10, 9, 12, 24, 3, 3, 1, 1, groups=3)
    plan = plan_convolution(shape, 2, "half", 32, TILE_BYTES, 0.0005)
    assert plan.serial == 8 and plan.in_chan_blocks > 1
    options = {"partialsType": "half", "availableMemoryProportion": 0.0005}
    graph, out = conv(x, w, options=options)
    variables = partials_variables(graph)
    assert len(variables) == 8 and all(v.type.size == 2 for v in variables)
    want = reference_conv(x, w, (1, 1), ((1, 1), (1, 1)), (1, 1), 3)
    assert float(np.max(np.abs(out["out"] - want))) <= 4e-3 * float(np.max(np.abs(want)))


def test_a_grouped_matmul_serialises_the_rows_of_every_group() -> None:
    """4 groups of [64, 32] x [32, 16] on 4 tiles at 1% of a tile: 3 serial slices of 22
    rows (the last 20) of every group, each reduced before the next."""
    a = RNG.standard_normal((4, 64, 32)).astype(np.float32)
    b = RNG.standard_normal((4, 32, 16)).astype(np.float32)
    plan = plan_matmul(64, 32, 16, 4, "float", 4, TILE_BYTES, 0.01, groups=4)
    assert plan_matmul(64, 32, 16, 4, "float", 4, TILE_BYTES, 0.6, groups=4).serial == 1
    assert (plan.serial, plan.slice_rows) == (3, 22) and plan.temp_bytes <= 0.01 * TILE_BYTES
    graph, out = run_op(
        lambda g, t, prog: poplin.mat_mul_grouped(
            g, t["a"], t["b"], prog, "ab", {"availableMemoryProportion": 0.01}
        ),
        {"a": a, "b": b},
        tiles=4,
    )
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert float(np.max(np.abs(out["out"] - want))) <= 1e-5 * float(np.max(np.abs(want)))
    assert convolve_sets(graph) == [f"ab/Conv_1/Serial_{i}/Convolve" for i in range(3)]
    (context,) = op_contexts(graph, "poplin::matMulGrouped")
    assert context.args["serialSplit"] == 3
    assert context.args["tempBytesPerTile"] == plan.temp_bytes


def test_serial_grouped_matmul_with_split_k_reduces_each_slice_in_half() -> None:
    a = RNG.uniform(0, 2, (4, 8, 200)).astype(np.float16)
    b = RNG.uniform(0, 1, (4, 200, 6)).astype(np.float16)
    plan = plan_matmul(8, 200, 6, 2, "half", 32, TILE_BYTES, 0.001, groups=4)
    assert plan.serial == 2 and plan.sk > 1
    options = {"partialsType": "half", "availableMemoryProportion": 0.001}
    graph, out = run_op(
        lambda g, t, prog: poplin.mat_mul_grouped(g, t["a"], t["b"], prog, "ab", options),
        {"a": a, "b": b},
    )
    variables = partials_variables(graph)
    assert len(variables) == 2 and all(v.type.size == 2 for v in variables)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out["out"], want, rtol=4e-3)


def test_a_bad_partials_type_names_the_grouped_op() -> None:
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)
    a = graph.add_variable(as_type(np.float16), [2, 3, 4], "a")
    b = graph.add_variable(as_type(np.float16), [2, 4, 5], "b")
    with pytest.raises(GraphError, match=r"poplin::matMulGrouped: option partialsType must be"):
        poplin.mat_mul_grouped(graph, a, b, Sequence(), options={"partialsType": "fp8"})
