"""Element-wise compute sets on strided views of memory (``codelets/flat_views.py``): the
address patterns found (a transposed activation, a broadcast scale), the results against
numpy, and the gathered path when the outputs are not one range of memory."""

from __future__ import annotations

import numpy as np

from ipu_engine import FLOAT, Graph, IPUModel, Sequence, popops, poputil
from ipu_engine.codelets import flat_views as flat_views_module
from ipu_engine.codelets import team
from ipu_engine.codelets.flat_views import apply_on_views, strided_pattern
from tests.ipu_engine.conftest import run_program

RNG = np.random.default_rng(11)
H, W, C = 4, 5, 6


def test_an_nchw_view_of_nhwc_memory_is_a_two_step_pattern() -> None:
    nhwc = np.arange(H * W * C).reshape(H, W, C) + 100
    assert strided_pattern(nhwc.transpose(2, 0, 1).reshape(-1)) == (100, [H * W, C], [C, 1])


def test_a_per_channel_scale_over_pixels_is_a_pattern_with_a_zero_step() -> None:
    scale = np.broadcast_to(np.arange(C)[:, None] + 7, (C, H * W)).reshape(-1)
    assert strided_pattern(scale) == (7, [H * W, C], [0, 1])


def test_irregular_or_descending_addresses_are_no_pattern() -> None:
    assert strided_pattern(np.array([0, 1, 2, 4, 5, 7])) is None
    assert strided_pattern(np.array([5, 4, 3, 2])) is None
    assert strided_pattern(np.array([0, 1, 5, 6, 10, 12])) is None


def _caches(engine) -> list[dict]:
    return [r.cache for plan in engine.executable.plans.values() for r in plan.runners]


def test_scale_shift_relu_of_a_transposed_activation_runs_on_views() -> None:
    """A batch-norm's scale and shift and a ReLU on the NCHW view of an NHWC activation
    mapped in channel blocks over tiles (each tile's elements are scattered in NCHW
    order): every op on views, the same numbers as numpy's."""
    device = IPUModel("ipu2", tiles_per_ipu=8).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [1, H, W, C], "x")
    tiles = np.broadcast_to(np.array([0, 0, 1, 1, 2, 3]), (1, H, W, C))  # channel blocks
    graph.set_tile_mapping_array(x, tiles)
    scale = graph.add_variable(FLOAT, [1, C, 1, 1], "scale")
    shift = graph.add_variable(FLOAT, [1, C, 1, 1], "shift")
    for t in (scale, shift):
        graph.set_tile_mapping_array(t, np.arange(C).reshape(1, C, 1, 1) % 4)
    for name, t in (("x", x), ("scale", scale), ("shift", shift)):
        graph.create_host_write(name, t)
    prog = Sequence()
    nchw = x.dim_shuffle([0, 3, 1, 2])
    y = popops.mul(graph, nchw, scale, prog)
    y = popops.add(graph, y, shift, prog)
    y = popops.unary(graph, "RELU", y, prog)
    graph.create_host_read("y", y)
    values = {
        "x": RNG.standard_normal((1, H, W, C)).astype(np.float32),
        "scale": RNG.standard_normal((1, C, 1, 1)).astype(np.float32),
        "shift": RNG.standard_normal((1, C, 1, 1)).astype(np.float32),
    }
    engine, got = run_program(graph, device, prog, values, ["y"])
    want = values["x"].transpose(0, 3, 1, 2) * values["scale"] + values["shift"]
    np.testing.assert_array_equal(got["y"], np.maximum(want, 0))
    found = [v for cache in _caches(engine) for k, v in cache.items() if k[0] == "flat_views"]
    assert len(found) == 3 and all(v is not None for v in found)
    first_op = next(v for v in found if "in2" in v and v["in1"].steps[-1] == C)
    assert first_op["in2"].steps[-1] == 0  # the scale, repeated over a channel's pixels


def test_an_in_place_op_on_every_other_element_is_gathered() -> None:
    """Output ``a[::2]``: not one range of memory, so the gathered path, same numbers."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [12], "a")
    b = graph.add_variable(FLOAT, [6], "b")
    for t in (a, b):
        graph.set_tile_mapping_array(t, np.arange(t.num_elements) % 3)
        graph.create_host_write(t.name, t)
    graph.create_host_read("a_out", a)
    prog = Sequence()
    popops.add_in_place(graph, a[::2], b, prog)
    values = {"a": RNG.standard_normal(12).astype(np.float32), "b": np.arange(6, dtype=np.float32)}
    engine, got = run_program(graph, device, prog, values, ["a_out"])
    want = values["a"].copy()
    want[::2] += values["b"]
    np.testing.assert_array_equal(got["a_out"], want)
    found = [v for cache in _caches(engine) for k, v in cache.items() if k[0] == "flat_views"]
    assert found == [None]


def _scale_nhwc_into_nchw(h: int, w: int, c: int) -> None:
    """A per-channel scale of an NHWC activation into its NCHW view, run; the same numbers
    as numpy's."""
    device = IPUModel("ipu2", tiles_per_ipu=8).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [1, h, w, c], "x")
    scale = graph.add_variable(FLOAT, [1, c, 1, 1], "scale")
    for name, t in (("x", x), ("scale", scale)):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
    prog = Sequence()
    y = popops.mul(graph, x.dim_shuffle([0, 3, 1, 2]), scale, prog)
    graph.create_host_read("y", y)
    values = {
        "x": RNG.standard_normal((1, h, w, c)).astype(np.float32),
        "scale": RNG.standard_normal((1, c, 1, 1)).astype(np.float32),
    }
    _, got = run_program(graph, device, prog, values, ["y"])
    np.testing.assert_array_equal(got["y"], values["x"].transpose(0, 3, 1, 2) * values["scale"])


def test_a_large_transposing_op_runs_in_its_operands_order(monkeypatch) -> None:
    """A per-channel scale of a 320-channel NHWC activation into its NCHW view (1 MB):
    the activation read across the output's rows, so -- without the team (``team``: its
    copy into the output, then the op, on every core) -- the op runs in the activation's
    order (its rows read contiguously); the same numbers as numpy's."""
    monkeypatch.setattr(team, "available", lambda: False)
    blocks = []
    real = flat_views_module._transposing

    def spy(args, out):
        found = real(args, out)
        blocks.append(found)
        return found

    monkeypatch.setattr(flat_views_module, "_transposing", spy)
    _scale_nhwc_into_nchw(28, 28, 320)
    assert blocks == [True]


def test_a_transposing_op_of_fewer_rows_copies_its_operand_into_rows_first(monkeypatch) -> None:
    """A per-channel scale of a 64-channel NHWC activation into its NCHW view: the
    activation is read across the output's rows, so -- without the team -- it is first
    copied in the output's order (``strided.copy``, tiles in registers), the scale is
    not; the same numbers as numpy's."""
    monkeypatch.setattr(team, "available", lambda: False)
    blocks = []
    real = flat_views_module.in_rows

    def spy(a, shape, purpose):
        blocks.append(a.strides)
        return real(a, shape, purpose)

    monkeypatch.setattr(flat_views_module, "in_rows", spy)
    c = 64
    _scale_nhwc_into_nchw(28, 30, c)
    assert blocks == [(4, 4 * c)]  # the activation alone, [C, H x W] by [1, C] elements


def test_an_operand_overlapping_the_output_is_read_before_it_is_written() -> None:
    """out = out.T + 1 in one buffer, run in the operand's order (numpy reads an operand
    overlapping the output first) or copied into rows first: the same numbers as
    out-of-place."""
    for n in (512, 64):  # run in the operand's order; copied into rows first
        values = RNG.standard_normal((n, n)).astype(np.float32)
        out = values.copy()
        one = np.broadcast_to(np.float32(1), out.shape)  # a constant, as a zero-step view
        apply_on_views(np.add, [out.T, one], out)
        np.testing.assert_array_equal(out, values.T + 1)
    scaled = RNG.standard_normal((512, 512)).astype(np.float32)
    result = np.empty_like(scaled)  # apart from its operand: the same numbers
    three = np.broadcast_to(np.float32(3), scaled.shape)
    apply_on_views(np.multiply, [scaled.T, three], result)
    np.testing.assert_array_equal(result, scaled.T * 3)


def test_a_large_transposing_op_apart_from_its_output_is_copied_into_it_first(
    monkeypatch,
) -> None:
    """Many rows read across the output's rows: the operand is copied into the output by
    ``strided.copy``, then the op runs in place -- in the operand's place, so a
    subtraction or division keeps its order; numpy's values to the bit. An operand that
    shares the output's memory is not copied over (it would be overwritten first)."""
    copies = []
    real = flat_views_module.strided.copy
    monkeypatch.setattr(
        flat_views_module.strided, "copy", lambda d, s: copies.append(d.shape) or real(d, s)
    )
    rows, cols = 256, 300
    nhwc = RNG.standard_normal((cols, rows)).astype(np.float32)
    x = nhwc.T  # [rows, cols] read across rows
    scale = np.broadcast_to(RNG.standard_normal((rows, 1)).astype(np.float32), (rows, cols))
    for fn, args, want in (
        (np.multiply, [x, scale], x * scale),
        (np.subtract, [scale, x], scale - x),
        (np.divide, [x, scale], x / scale),
    ):
        out = np.empty((rows, cols), np.float32)
        copies.clear()
        apply_on_views(fn, args, out)
        np.testing.assert_array_equal(out, want)
        assert copies == [(rows, cols)]
    # in place: the output is the operand's own memory, read in the operand's order
    square = RNG.standard_normal((rows, rows)).astype(np.float32)
    both = square.copy()
    copies.clear()
    apply_on_views(np.add, [both.T, np.float32(1)], both)
    np.testing.assert_array_equal(both, square.T + 1)
    assert copies == []
