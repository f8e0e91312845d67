"""A kept plan run on every core without the GIL (``codelets/team.py``, ``_team.c``): each
step computes what the Python call it stands for computes, to the bit -- a BLAS product
what numpy's matmul makes of the same views (numpy is the reference), a window copy, its
blanks, a bias, a depthwise call -- on one thread or several; a plan numpy would make
another way stays Python; the helpers take pieces, and a forked child has its own."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

from ipu_engine.codelets import conv_kept, kernels, plan_parts, team
from ipu_engine.codelets.conv_products import product, window_copies, windowed
from ipu_engine.poplar import workers
from tests.ipu_engine.conv_reruns import conv_reruns, runner_caches

RNG = np.random.default_rng(48)
F32 = np.float32


def test_numpys_blas_product_is_found_for_the_team() -> None:
    """numpy's wheels (the project's numpy) carry an ILP64 OpenBLAS: its product is found
    among the loaded libraries and handed to the team (without it, the plans stay Python:
    ``test_without_numpys_blas_product_plans_stay_python``)."""
    assert team.available()


def _random(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def _gemm_alone(a: np.ndarray, b: np.ndarray, c: np.ndarray, threads: int = 1) -> None:
    team._kernels.team_plan([[("gemm", a, b, c)]]).run(threads)


def _layouts() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Products as the kept plans meet them: rows, transposed operands (an NCHW input's
    pixels, read as columns), rows apart in longer rows of memory, and an output whose rows
    are its columns (numpy then multiplies the transposes)."""
    m, k, n = 70, 33, 45
    wide = _random(m, 128)
    return {
        "rows": (_random(m, k), _random(k, n), np.zeros((m, n), F32)),
        "transposed input": (_random(k, m).T, _random(k, n), np.zeros((m, n), F32)),
        "transposed weights": (_random(m, k), _random(n, k).T, np.zeros((m, n), F32)),
        "rows apart": (wide[:, 5 : 5 + k], _random(k, n), np.zeros((m, 2 * n), F32)[:, 3 : 3 + n]),
        "output's rows are its columns": (_random(m, k), _random(k, n), np.zeros((n, m), F32).T),
    }


@pytest.mark.parametrize("layout", list(_layouts()))
def test_a_product_is_the_one_numpy_makes_to_the_bit(layout) -> None:
    a, b, c = _layouts()[layout]
    want = np.matmul(a, b)
    _gemm_alone(a, b, c)
    np.testing.assert_array_equal(c, want)


def test_a_plan_is_refused_where_numpy_would_not_make_one_blas_product() -> None:
    """A vector (numpy calls gemv), a matrix times its own transpose (syrk), an operand
    BLAS cannot read (numpy copies it first): C would not compute numpy's bits, so the
    plan is refused and stays Python."""
    m = _random(40, 30)
    out = np.zeros((40, 40), F32)
    refused = {
        "vector": (m[:1], _random(30, 8), np.zeros((1, 8), F32)),
        "own transpose": (m, m.T, out),
        "unreadable": (_random(40, 60)[:, ::2], _random(30, 8), np.zeros((40, 8), F32)),
    }
    for name, (a, b, c) in refused.items():
        with pytest.raises(ValueError, match="numpy would"):
            _gemm_alone(a, b, c)
        calls = [(product, (a[None, None], b[None, None], None, c[None, None]))]
        assert team.compiled(workers.Pieces(tuple(calls), (1.0,))) is None, name


def _plan() -> tuple[list, list[np.ndarray]]:
    """A stacked product with biases (weights broadcast over the stack), a tall product, a
    padded 3x3 window's product (patches made by copies into a matrix that holds other
    values: its blanks are zeroed each call) and a depthwise call; and their outputs."""
    stack = (_random(3, 1, 100, 20), _random(1, 1, 20, 30), _random(3, 1, 1, 30))
    stack_out = np.zeros((3, 1, 100, 30), F32)
    tall = (_random(1, 1, 300, 40), _random(1, 1, 40, 64), None, np.zeros((1, 1, 300, 64), F32))
    g = {
        "groups": 1, "inChans": 5, "outChans": 7, "inRows": 8, "width": 9, "outRows": 8,
        "outWidth": 9, "kernelH": 3, "kernelW": 3, "strideH": 1, "strideW": 1,
        "dilationH": 1, "dilationW": 1, "padTop": 1, "padLeft": 1,
    }  # fmt: skip
    images = _random(2, 1, 1, 8, 9, 5)
    space = np.full(2 * 72 * 45 + 16, np.nan, F32)

    def make(shape: tuple[int, ...]) -> np.ndarray:  # a matrix holding others' values
        return space[16 : 16 + int(np.prod(shape))].reshape(shape)

    patches, copies, blanks = window_copies(images, g, make)
    window_out = np.zeros((2, 1, 72, 7), F32)
    window = (copies, blanks, patches, _random(2, 1, 45, 7), None, window_out)
    x, w, bias = _random(2, 10, 12, 6), _random(2, 3, 3, 6, 1), _random(2, 6, 1)
    depthwise_out = np.zeros((2, 6, 1, 10, 12), F32)
    depthwise = (x, w, bias, depthwise_out, 1, 1, 1, 1, 1, 1)
    calls = [
        (product, (*stack, stack_out)),
        (product, tall),
        (windowed, window),
        (kernels.depthwise, depthwise),
    ]
    return calls, [stack_out, tall[3], window_out, depthwise_out]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_compiled_plan_computes_what_its_python_calls_compute(threads) -> None:
    calls, outputs = _plan()
    for fn, args in calls:  # the Python path: numpy's matmul, the copies, the kernels
        fn(*args)
    want = [o.copy() for o in outputs]
    assert np.isfinite(want[2]).all()  # the blanks were zeroed over the NaN left there
    for o in outputs:
        o[...] = np.nan
    pieces = plan_parts.pieces_of(calls, 2, min_seconds=0.0)
    native = team.compiled(pieces)
    assert native is not None and native.plan.pieces == len(pieces.calls) > len(calls)
    kinds = {kind for piece in native.steps for kind in piece}
    assert kinds == {"gemm", "add", "copy", "zero", "depthwise"}
    for _ in range(3):
        native.run(threads)
        for got, expected in zip(outputs, want, strict=True):
            np.testing.assert_array_equal(got, expected)
    # and the whole is a convolution: the window's product against im2col by numpy
    _, (_, _, patches, weights, _, out) = calls[2]
    np.testing.assert_allclose(out, patches @ weights, rtol=1e-5, atol=1e-5)


def test_the_helpers_take_pieces() -> None:
    """With two threads a helper takes pieces too: the plan's many products finish with
    the helper having run some of them (it may be asleep at first, or share the caller's
    CPU on a one-core machine; then the caller runs more), each run numpy's products."""
    assert team.available()
    a, b = _random(64, 200), _random(200, 200)
    outs = [np.zeros((64, 200), F32) for _ in range(64)]
    plan = team._kernels.team_plan([[("gemm", a, b, c)] for c in outs])
    before, want = team._kernels.team_helped(), a @ b
    for _ in range(2000):  # until the helper has taken a piece
        for c in outs:
            c[...] = np.nan
        plan.run(2)
        for c in outs:
            np.testing.assert_array_equal(c, want)
        if team._kernels.team_helped() > before:
            break
    assert team._kernels.team_helpers() >= 1
    assert team._kernels.team_helped() > before


def _child_runs_a_plan(queue) -> None:
    a, b = _random(80, 30), _random(30, 40)
    outs = [np.zeros((80, 40), F32) for _ in range(8)]
    team._kernels.team_plan([[("gemm", a, b, c)] for c in outs]).run(2)
    queue.put(all(np.array_equal(c, a @ b) for c in outs))


def test_a_forked_child_runs_plans_with_helpers_of_its_own() -> None:
    """A child forked after the team started has none of its threads: it starts its
    own (the parent's would never answer) and computes the same."""
    a, b = _random(80, 30), _random(30, 40)
    team._kernels.team_plan([[("gemm", a, b, np.zeros((80, 40), F32))]] * 4).run(2)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_runs_a_plan, args=(queue,))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) is True


def test_steps_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="no step"):
        team._kernels.team_plan([[("fill", np.zeros(3, F32))]])
    with pytest.raises(ValueError, match="shapes"):
        _gemm_alone(_random(4, 5), _random(6, 7), np.zeros((4, 7), F32))
    with pytest.raises(TypeError, match="writable"):
        _gemm_alone(_random(4, 5), _random(5, 7), np.broadcast_to(np.zeros(7, F32), (4, 7)))
    with pytest.raises(ValueError, match="indexes"):
        team._kernels.team_plan([[("zero", np.zeros((2, 5), F32), np.array([5]))]])
    with pytest.raises(ValueError, match="copy"):
        team._kernels.team_plan([[("copy", np.zeros((2, 5), F32), np.zeros((2, 4), F32))]])


def test_an_engines_convolutions_run_as_compiled_plans_equal_to_numpy(monkeypatch) -> None:
    """A padded 3x3 convolution (window copies, blanks, weights made, products, biases)
    and a pointwise one are kept as compiled plans; every run with new values equals
    numpy's convolution (``conv_reruns``), on two threads."""
    monkeypatch.setattr(workers, "cores", lambda: 2)
    for shapes, padding in [
        ({"x": (1, 10, 10, 16), "w": (3, 3, 16, 16), "b": (16,)}, 1),
        ({"x": (1, 64, 20, 20), "w": (1, 1, 64, 64), "b": (64,)}, 0),
    ]:
        engine = conv_reruns(shapes, 3, nchw=padding == 0, tiles_per_ipu=16, padding=padding)
        plans = [c[conv_kept._PLAN][1] for c in runner_caches(engine) if conv_kept._PLAN in c]
        assert plans and all(p.native is not None for p in plans)


def test_without_numpys_blas_product_plans_stay_python(monkeypatch) -> None:
    monkeypatch.setattr(team, "available", lambda: False)
    engine = conv_reruns(
        {"x": (1, 10, 10, 16), "w": (3, 3, 16, 16), "b": (16,)}, 2, nchw=False,
        tiles_per_ipu=16, padding=1,
    )  # fmt: skip
    plans = [c[conv_kept._PLAN][1] for c in runner_caches(engine) if conv_kept._PLAN in c]
    assert plans and all(p.native is None for p in plans)


def _awkward(*shape: int) -> np.ndarray:
    """Random float32 values with zeros of both signs, infinities and NaN among them."""
    values = _random(*shape)
    flat = values.reshape(-1)
    flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
    return values


@pytest.mark.parametrize("fn", [np.add, np.subtract, np.multiply, np.divide])
def test_a_binary_step_is_numpys_operation_to_the_bit(fn) -> None:
    """Rows, an operand read across the rows (a transposed activation), a broadcast
    per-row value (a batch-norm scale) and the output as its own operand (in place)."""
    a, t = _awkward(48, 70), _awkward(70, 48).T
    scale = np.broadcast_to(_awkward(48, 1), (48, 70))
    for x, y in [(a, t), (t, scale), (scale, a)]:
        out = np.full((48, 70), np.nan, F32)
        team.rows_plan(team.map_steps(fn, [x, y], out), 48, 1).plan.run(2)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(out, fn(x, y))
    inplace, want = a.copy(), None
    with np.errstate(all="ignore"):
        want = fn(inplace, scale)
    team.rows_plan(team.map_steps(fn, [inplace, scale], inplace), 48, 1).plan.run(2)
    np.testing.assert_array_equal(inplace, want)


def test_a_relu_and_a_sum_of_partials_are_the_kernels_to_the_bit() -> None:
    from ipu_engine.codelets import ops_table

    x = _awkward(64, 90)
    out = np.empty_like(x)
    team.rows_plan(team.map_steps(ops_table.relu, [x], out), 64, 1).plan.run(2)
    np.testing.assert_array_equal(out, np.maximum(x, np.float32(0)))
    partials = _awkward(5, 1000)
    out = np.empty(1000, F32)
    team.rows_plan(lambda r: [("partials", partials[:, r], out[r])], 1000, 1).plan.run(2)
    want = np.empty(1000, F32)
    kernels.sum_partials(partials, want)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(want, partials.sum(axis=0), rtol=1e-5, equal_nan=True)


def test_an_operand_overlapping_the_output_elsewhere_stays_python() -> None:
    """numpy reads an operand that overlaps the output (not element for element) before
    it writes: C would read what it had written, so no steps; a transposed operand
    copied into the output first is a copy then the op in place."""
    from ipu_engine.codelets import flat_views

    memory = _random(128, 128)
    assert team.map_steps(np.add, [memory.T, memory.T], memory) is None
    rows, cols = 256, 300
    x = _random(cols, rows).T
    scale = np.broadcast_to(_random(rows, 1), (rows, cols))
    out = np.empty((rows, cols), F32)
    native = flat_views.views_plan(np.multiply, [x, scale], out)
    assert native is not None and {k for piece in native.steps for k in piece} == {
        "copy",
        "binary",
    }
    native.run(2)
    np.testing.assert_array_equal(out, x * scale)


def test_an_engines_batch_norm_and_partials_run_as_team_plans_equal_to_numpy(monkeypatch) -> None:
    """The MobileNet block's pointwise convolution (its partials summed by a reduction)
    and a scale, shift and ReLU of its NCHW activation: the element-wise ops and the
    reduction keep team plans, and every run with new values equals numpy's."""
    from ipu_engine import FLOAT, Graph, IPUModel, Sequence, popops, poputil
    from ipu_engine.codelets import elementwise
    from tests.ipu_engine.conftest import run_program

    monkeypatch.setattr(workers, "cores", lambda: 2)
    engine = conv_reruns({"x": (1, 64, 56, 56), "w": (1, 1, 64, 64), "b": (64,)}, 2, nchw=True)
    sums = [c["kept_sum"][1] for c in runner_caches(engine) if "kept_sum" in c]
    assert sums and all(isinstance(s, team.TeamPieces) for s in sums)
    device = IPUModel("ipu2", tiles_per_ipu=16).create_device()
    graph = Graph(device.target)
    h, w, c = 28, 28, 96
    x = graph.add_variable(FLOAT, [1, h, w, c], "x")
    scale = graph.add_variable(FLOAT, [1, c, 1, 1], "scale")
    shift = graph.add_variable(FLOAT, [1, c, 1, 1], "shift")
    for t in (x, scale, shift):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(t.name, t)
    prog = Sequence()
    y = popops.mul(graph, x.dim_shuffle([0, 3, 1, 2]), scale, prog)
    y = popops.add(graph, y, shift, prog)
    y = popops.unary(graph, "RELU", y, prog)
    graph.create_host_read("y", y)
    engine = None
    for _ in range(2):
        values = {
            "x": _awkward(1, h, w, c), "scale": _random(1, c, 1, 1), "shift": _random(1, c, 1, 1)
        }  # fmt: skip
        if engine is None:
            engine, got = run_program(graph, device, prog, values, ["y"])
        else:
            for name, value in values.items():
                engine.write_tensor(name, value)
            engine.run(0)
            got = {"y": engine.read_tensor("y")}
        with np.errstate(invalid="ignore"):
            scaled = values["x"].transpose(0, 3, 1, 2) * values["scale"] + values["shift"]
        np.testing.assert_array_equal(got["y"], np.maximum(scaled, np.float32(0)))
    kept = [c[elementwise._TEAM][1] for c in runner_caches(engine) if elementwise._TEAM in c]
    assert len(kept) == 3 and all(isinstance(k, team.TeamPieces) for k in kept)


def test_callers_on_several_threads_each_get_their_own_results() -> None:
    """Three Python threads run their own plans on the team at once, again and again (the
    GIL is released in each run): every run of every plan computes its own outputs, none
    left unwritten or written by another's job, and none waits forever."""
    import threading

    plans = []
    for _ in range(3):
        a, b = _random(64, 50), _random(50, 40)
        outs = [np.zeros((64, 40), F32) for _ in range(16)]
        plans.append((a @ b, outs, team._kernels.team_plan([[("gemm", a, b, c)] for c in outs])))
    wrong: list[int] = []

    def runs(want: np.ndarray, outs: list[np.ndarray], plan) -> None:
        for i in range(200):
            for c in outs:
                c[...] = np.nan
            plan.run(2)
            if not all(np.array_equal(c, want) for c in outs):
                wrong.append(i)
                return

    threads = [threading.Thread(target=runs, args=plan) for plan in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert wrong == []
