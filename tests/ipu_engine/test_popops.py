"""popops operations give numpy's answers, exactly for element-wise arithmetic."""

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    HALF,
    INT,
    Graph,
    IPUModel,
    Sequence,
    ShapeError,
    TypeMismatchError,
    popops,
    poputil,
)
from ipu_engine.popops.expr import _1, _2, _3, exp, max_, select
from tests.ipu_engine.conftest import run_program

RNG = np.random.default_rng(7)


def _inputs(graph, arrays, dtype):
    tensors = []
    for name, a in arrays.items():
        t = graph.add_variable(dtype, a.shape, name)
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
        tensors.append(t)
    return tensors


def _run(device, build, arrays, dtype=FLOAT):
    graph = Graph(device.target)
    tensors = _inputs(graph, arrays, dtype)
    prog = Sequence()
    out = build(graph, prog, *tensors)
    graph.create_host_read("out", out)
    _, result = run_program(graph, device, prog, arrays, ["out"])
    return result["out"]


BINARY = [
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("div", np.divide),
    ("max", np.maximum),
    ("min", np.minimum),
    ("pow", np.power),
]
UNARY = [
    ("neg", np.negative),
    ("abs", np.abs),
    ("exp", np.exp),
    ("log", np.log),
    ("sqrt", np.sqrt),
    ("square", np.square),
    ("tanh", np.tanh),
    ("relu", lambda x: np.maximum(x, 0)),
]


@pytest.mark.parametrize(("name", "ref"), BINARY)
@pytest.mark.parametrize("dtype", [FLOAT, HALF])
def test_binary_ops_equal_numpy_exactly(ipu2, name, ref, dtype):
    a = RNG.uniform(0.5, 2.0, (37, 53)).astype(dtype.numpy_dtype)
    b = RNG.uniform(0.5, 2.0, (37, 53)).astype(dtype.numpy_dtype)
    fn = getattr(popops, name)
    out = _run(ipu2, lambda g, p, x, y: fn(g, x, y, p), {"a": a, "b": b}, dtype)
    assert out.dtype == dtype.numpy_dtype
    np.testing.assert_array_equal(out, ref(a, b))


@pytest.mark.parametrize(("name", "ref"), UNARY)
def test_unary_ops_equal_numpy(ipu2, name, ref):
    a = RNG.uniform(0.1, 3.0, 1000).astype(np.float32) * RNG.choice([-1, 1], 1000)
    if name in ("log", "sqrt"):
        a = np.abs(a)
    out = _run(ipu2, lambda g, p, x: getattr(popops, name)(g, x, p), {"a": a.astype(np.float32)})
    np.testing.assert_array_equal(out, ref(a.astype(np.float32)))


def test_integer_division_truncates_toward_zero_like_c(ipu2):
    a = np.array([7, -7, 7, -7, 0], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3], dtype=np.int32)
    out = _run(ipu2, lambda g, p, x, y: popops.div(g, x, y, p), {"a": a, "b": b}, INT)
    assert out.tolist() == [3, -3, -3, 3, 0]


def test_operands_broadcast_like_numpy(ipu2):
    a = RNG.standard_normal((6, 5)).astype(np.float32)
    row = RNG.standard_normal((5,)).astype(np.float32)
    out = _run(ipu2, lambda g, p, x, y: popops.mul(g, x, y, p), {"a": a, "row": row})
    np.testing.assert_array_equal(out, a * row)


def test_in_place_ops_cast_fill_and_scaled_add(device4):
    graph = Graph(device4.target)
    a = graph.add_variable(FLOAT, [10], "a")
    b = graph.add_variable(FLOAT, [10], "b")
    z = graph.add_variable(INT, [4], "z")
    for t in (a, b, z):
        poputil.map_tensor_linearly(graph, t)
    prog = Sequence()
    popops.add_in_place(graph, a, b, prog)
    popops.scaled_add_to(graph, a, b, -0.25, prog)
    c = popops.cast(graph, a, INT, prog)
    popops.fill(graph, z, 42, prog)
    for name, t in (("a", a), ("b", b)):
        graph.create_host_write(name, t)
    for name, t in (("a", a), ("c", c), ("z", z)):
        graph.create_host_read(name, t)
    av = np.arange(10, dtype=np.float32)
    bv = np.full(10, 4.0, dtype=np.float32)
    _, out = run_program(graph, device4, prog, {"a": av, "b": bv}, ["a", "c", "z"])
    expected = (av + bv) + np.float32(-0.25) * bv
    np.testing.assert_array_equal(out["a"], expected)
    assert out["c"].tolist() == expected.astype(np.int32).tolist()
    assert out["z"].tolist() == [42] * 4


def test_map_evaluates_an_expression_in_one_compute_set(ipu2):
    a, b, c = (RNG.standard_normal(500).astype(np.float32) for _ in range(3))
    expr = select(exp(_1) * 2 + _2, max_(_3, 0.0), _1 > _2)

    def build(g, p, x, y, z):
        before = len(g.compute_sets)
        out = popops.map(g, expr, [x, y, z], p)
        assert len(g.compute_sets) == before + 1
        return out

    out = _run(ipu2, build, {"a": a, "b": b, "c": c})
    expected = np.where(a > b, np.exp(a) * np.float32(2) + b, np.maximum(c, np.float32(0)))
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("dims", "op", "ref"),
    [
        ([1], "add", lambda x: x.sum(axis=1)),
        ([0], "max", lambda x: x.max(axis=0)),
        ([0, 2], "min", lambda x: x.min(axis=(0, 2))),
        ([0, 1, 2], "add", lambda x: x.sum()),
        ([2], "square_add", lambda x: (x * x).sum(axis=2)),
        ([1], "mul", lambda x: x.prod(axis=1)),
    ],
)
def test_reduce_equals_numpy_over_any_dimensions(ipu2, dims, op, ref):
    x = RNG.uniform(0.9, 1.1, (40, 30, 20)).astype(np.float32)
    out = _run(ipu2, lambda g, p, t: popops.reduce(g, t, dims, op, p), {"x": x})
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=1e-5)


def test_reduce_of_data_spread_over_tiles_uses_two_stages():
    device = IPUModel("ipu2", tiles_per_ipu=8).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [4, 1000], "x")
    poputil.map_tensor_linearly(graph, x)  # each row spans two tiles
    prog = Sequence()
    out = popops.reduce(graph, x, [1], "add", prog, scale=0.001)
    names = [cs.name for cs in graph.compute_sets]
    assert names == ["reduce/Reduce/stage1", "reduce/Reduce/stage2"]
    graph.create_host_write("x", x)
    graph.create_host_read("out", out)
    xs = RNG.standard_normal((4, 1000)).astype(np.float32)
    _, result = run_program(graph, device, prog, {"x": xs}, ["out"])
    np.testing.assert_allclose(
        result["out"], xs.astype(np.float64).mean(axis=1), rtol=1e-4, atol=1e-6
    )


def test_ten_million_element_ops_equal_numpy_exactly(ipu2):
    n = 10_000_000
    a = RNG.standard_normal(n, dtype=np.float32)
    b = RNG.standard_normal(n, dtype=np.float32)

    def build(g, p, x, y):
        s = popops.add(g, x, y, p)
        return popops.mul(g, s, y, p)

    out = _run(ipu2, build, {"a": a, "b": b})
    np.testing.assert_array_equal(out, (a + b) * b)


def test_op_errors_name_the_tensors(device4):
    graph = Graph(device4.target)
    a = graph.add_variable(FLOAT, [3, 4], "a")
    b = graph.add_variable(FLOAT, [5], "b")
    i = graph.add_variable(INT, [3, 4], "i")
    prog = Sequence()
    with pytest.raises(ShapeError, match=r"shapes do not broadcast: 'a' \(3, 4\) and 'b' \(5,\)"):
        popops.add(graph, a, b, prog)
    with pytest.raises(TypeMismatchError, match="'a' is FLOAT but 'i' is INT"):
        popops.sub(graph, a, i, prog)
    with pytest.raises(TypeMismatchError, match="EXPONENT needs float or half tensors; 'i' is INT"):
        popops.exp(graph, i, prog)
    with pytest.raises(ShapeError, match="reduc"):
        popops.reduce(graph, graph.add_variable(FLOAT, [3, 0], "empty"), [1], "add", prog)
