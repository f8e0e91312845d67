"""Issue 30, point 4: each engine misuse the issue's probe found is an EngineError naming the
call and the argument -- never a raw Python error (16 found) nor a silently wrong result (5
found) -- and leaves the graph, program or engine as it was."""

from __future__ import annotations

import numpy as np
import pytest

import ipu_engine.pvti as pvti
from ipu_engine import (
    FLOAT,
    INT,
    Copy,
    Engine,
    EngineError,
    Graph,
    GraphError,
    HandleError,
    HostMemoryError,
    IPUModel,
    ProgramError,
    Sequence,
    ShapeError,
    poplin,
    popops,
)
from ipu_engine.frontend import nn
from ipu_engine.popops import expr
from ipu_engine.popops.expr import MAX_EXPR_DEPTH, MAX_EXPR_NODES
from ipu_engine.pvti.errors import MetricError


@pytest.fixture
def device():
    return IPUModel("ipu2", tiles_per_ipu=4).create_device()


def mapped(graph: Graph, dtype, shape, name: str):
    t = graph.add_variable(dtype, shape, name)
    graph.set_tile_mapping(t, 0)
    return t


def graph_state(graph: Graph, prog: Sequence) -> tuple[int, int, int, int]:
    return (
        len(graph.variables),
        len(graph.compute_sets),
        len(graph.vertex_blocks),
        len(prog.programs),
    )


def runs(graph: Graph, device, prog: Sequence, handle: str) -> np.ndarray:
    engine = Engine(graph, prog)
    engine.load(device)
    engine.run(0)
    return engine.read_tensor(handle)


# -- raw Python errors before ------------------------------------------------------------------


def test_a_variable_name_that_is_not_a_string_is_named(device):
    graph = Graph(device.target)
    with pytest.raises(GraphError, match=r"Graph.add_variable: the name must be a string, got 3"):
        graph.add_variable(FLOAT, [4], 3)
    with pytest.raises(GraphError, match=r"Graph.add_constant: the name must be a string"):
        graph.add_constant(FLOAT, [4], 0.0, ["c"])
    assert graph.variables == []


def test_string_slice_bounds_are_shape_errors(device):
    graph = Graph(device.target)
    t = mapped(graph, FLOAT, [4, 4], "t")
    with pytest.raises(ShapeError, match=r"tensor 't' .*the slice start must be an integer, got"):
        t["a":"b"]
    with pytest.raises(ShapeError, match=r"tensor 't' .*the slice stop must be an integer, got"):
        t[0:"2"]
    with pytest.raises(ShapeError, match=r"slice of 't': begin must be an integer, got 'a'"):
        t.slice("a", "b")
    with pytest.raises(ShapeError, match=r"slice of 't': begin of dimension 1 must be an integer"):
        t.slice([0, "1"], [2, 3])
    with pytest.raises(ShapeError, match=r"tensor 't' .*an index must be an integer or a slice"):
        t["x"]
    assert t[1:3].shape == (2, 4) and t.slice(1, 3, 1).shape == (4, 2)


@pytest.mark.parametrize("times", [0, -1, 2.0, "2", True])
def test_broadcast_times_must_be_a_whole_count_of_at_least_one(device, times):
    graph = Graph(device.target)
    t = mapped(graph, FLOAT, [2], "t")
    with pytest.raises(ShapeError, match=r"broadcast of tensor 't': times"):
        t.broadcast(times, 0)
    assert t.broadcast(3, 0).shape == (6,)


def test_a_broadcast_larger_than_a_tensor_may_be_is_refused(device):
    graph = Graph(device.target)
    t = mapped(graph, FLOAT, [1024], "t")
    with pytest.raises(ShapeError, match=r"broadcast of tensor 't' 2147483648 times: shape"):
        t.broadcast(2**31, 0)  # 2**41 elements, more than MAX_ELEMENTS
    with pytest.raises(HostMemoryError, match=r"tensor 't.broadcast\(268435456\)' .* needs"):
        t.broadcast(2**28, 0)  # 2**38 addresses: terabytes this machine does not have


def test_an_engine_without_programs_is_a_program_error(device):
    graph = Graph(device.target)
    with pytest.raises(ProgramError, match=r"Engine: the programs must be a list, got None"):
        Engine(graph, programs=None)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (float("nan"), "infinity or NaN cannot be stored in a INT tensor"),
        (np.inf, "infinity or NaN cannot be stored in a INT tensor"),
        ("1", "expected numbers, got str"),
        (2**40, "1099511627776 is outside the range of INT"),
    ],
)
def test_fill_of_a_value_an_int_tensor_cannot_hold_is_refused_before_any_change(
    device, value, said
):
    graph = Graph(device.target)
    k = mapped(graph, INT, [4], "k")
    prog = Sequence()
    before = graph_state(graph, prog)
    with pytest.raises(GraphError, match=r"popops::fill: the value") as e:
        popops.fill(graph, k, value, prog)
    assert said in str(e.value)
    assert graph_state(graph, prog) == before  # no compute set left behind
    popops.fill(graph, k, 7, prog)
    graph.create_host_read("k", k)
    assert runs(graph, device, prog, "k").tolist() == [7, 7, 7, 7]


@pytest.mark.parametrize(
    ("dims", "said"),
    [
        ("ab", "the dimensions must be a list, got 'ab' (str)"),
        (1.0, "the dimensions must be a list, got 1.0 (float)"),
        ([1.0], "the dimensions: item 0 must be an integer, got 1.0 (float)"),
        ([True], "the dimensions: item 0 must be an integer, got the boolean True"),
    ],
)
def test_reduce_dims_that_are_not_integers_are_named(device, dims, said):
    graph = Graph(device.target)
    a = mapped(graph, FLOAT, [2, 3], "a")
    prog = Sequence()
    before = graph_state(graph, prog)
    with pytest.raises(GraphError, match="popops::reduce") as e:
        popops.reduce(graph, a, dims, "add", prog)
    assert said in str(e.value)
    assert graph_state(graph, prog) == before


def test_a_string_constant_in_a_map_expression_is_refused_where_it_is_written():
    with pytest.raises(
        EngineError, match=r"popops.expr.Const: the value must be a number, got 'x'"
    ):
        expr.Const("x")
    with pytest.raises(EngineError, match=r"popops.expr: an operand must be a number or an expr"):
        expr._1 + "x"
    with pytest.raises(EngineError, match=r"popops.expr: an operand .* got \[1\] \(list\)"):
        expr.max_(expr._1, [1])
    with pytest.raises(EngineError, match=r"popops.expr.Placeholder: placeholders count from _1"):
        expr.Placeholder(0)
    with pytest.raises(EngineError, match=r"popops.expr.Binary: unknown operation 'PLUS'"):
        expr.Binary("PLUS", expr._1, expr._2)


def test_a_map_expression_a_million_deep_is_refused_without_recursing(device):
    graph = Graph(device.target)
    a = mapped(graph, FLOAT, [4], "a")
    prog = Sequence()
    deep = expr._1
    for _ in range(10**6):
        deep = deep + 1.0
    before = graph_state(graph, prog)
    with pytest.raises(GraphError, match=f"popops::map: the expression is nested more than {MAX_EXPR_DEPTH} deep"):  # fmt: skip
        popops.map(graph, deep, [a], prog)
    bomb = expr._1
    for _ in range(60):  # 2**60 nodes when each use is counted: its text alone would not fit
        bomb = bomb + bomb
    with pytest.raises(GraphError, match=f"more than {MAX_EXPR_NODES} nodes"):
        popops.map_in_place(graph, bomb, [a], prog)
    assert graph_state(graph, prog) == before
    # the deepest expression allowed is evaluated right: _1 + 1 + 1 ... (MAX - 1 additions)
    ok = expr._1
    for _ in range(MAX_EXPR_DEPTH - 1):
        ok = ok + 1.0
    out = popops.map(graph, ok, [a], prog)
    graph.create_host_write("a", a)
    graph.create_host_read("out", out)
    engine = Engine(graph, prog)
    engine.load(device)
    engine.write_tensor("a", [0.0, 1.0, -2.0, 0.5])
    engine.run(0)
    expected = np.array([0.0, 1.0, -2.0, 0.5]) + (MAX_EXPR_DEPTH - 1)
    np.testing.assert_array_equal(engine.read_tensor("out"), expected)


def test_mat_mul_with_an_empty_inner_dimension_names_the_call(device):
    graph = Graph(device.target)
    a = mapped(graph, FLOAT, [2, 0], "a")
    b = mapped(graph, FLOAT, [0, 3], "b")
    prog = Sequence()
    before = graph_state(graph, prog)
    with pytest.raises(ShapeError, match=r"poplin::matMul: 'a' \(2, 0\) x 'b' \(0, 3\) has K = 0"):
        poplin.mat_mul(graph, a, b, prog)
    with pytest.raises(ShapeError, match=r"poplin::matMulPlan: .* has K = 0"):
        poplin.mat_mul_plan(graph, a, b)
    assert graph_state(graph, prog) == before


@pytest.mark.parametrize(
    ("sizes", "said"),
    [
        ((-1, 3), "Linear: in_features must be at least 1, got -1"),
        ((3, -2), "Linear: out_features must be at least 1, got -2"),
        ((0, 3), "Linear: in_features must be at least 1, got 0"),
        ((2.5, 3), "Linear: in_features must be an integer, got 2.5"),
        ((3, "4"), "Linear: out_features must be an integer, got '4'"),
    ],
)
def test_nn_linear_sizes_must_be_positive_integers(sizes, said):
    with pytest.raises(ShapeError) as e:
        nn.Linear(*sizes)
    assert said in str(e.value)
    assert nn.Linear(3, 2, seed=0).weight.shape == (3, 2)


def test_a_string_added_to_a_pvti_series_is_a_metric_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PVTI_OPTIONS", raising=False)
    pvti.enable(str(tmp_path / "traces"))
    try:
        series = pvti.Graph("Loss", "").addSeries("train")
        for bad in ("x", [1.0], None, True):
            with pytest.raises(MetricError, match=r"Series 'train' of 'Loss': the value must be"):
                series.add(bad)
        series.add(0.5)
    finally:
        pvti.disable()


# -- silently wrong before ---------------------------------------------------------------------


def test_float_slice_bounds_are_refused_not_truncated(device):
    graph = Graph(device.target)
    t = mapped(graph, FLOAT, [4, 4], "t")
    with pytest.raises(ShapeError, match=r"slice of 't': begin must be an integer, got 0.5"):
        t.slice(0.5, 2.5)  # was the rows [0, 2): int() truncated both bounds
    with pytest.raises(ShapeError, match=r"slice of 't': end must be an integer, got 2.5"):
        t.slice(0, 2.5, 1)
    with pytest.raises(ShapeError, match=r"tensor 't' .*the slice start must be an integer"):
        t[0.5:2]
    assert t.slice(np.int64(1), 3).shape == (2, 4)


def test_a_copy_into_a_constant_is_refused_at_compile_naming_the_constant(device):
    graph = Graph(device.target)
    c = graph.add_constant(FLOAT, [4], [1.0, 2.0, 3.0, 4.0], "weights")
    x = mapped(graph, FLOAT, [4], "x")
    graph.set_tile_mapping(c, 1)
    graph.create_host_read("c", c)
    with pytest.raises(ProgramError, match=r"'Copy x -> weights' writes constant 'weights'") as e:
        Engine(graph, Copy(x, c))
    assert "constants are read-only" in str(e.value)
    # an in-place op (a vertex output) and a stream copy into the constant are refused too
    inc = Sequence()
    popops.add_in_place(graph, c, x, inc)
    with pytest.raises(ProgramError, match=r"writes constant 'weights'"):
        Engine(graph, inc)
    stream = graph.add_host_to_device_fifo("in", FLOAT, 4)
    with pytest.raises(ProgramError, match=r"writes constant 'weights'"):
        Engine(graph, Copy(stream, c))
    with pytest.raises(
        HandleError, match=r"create_host_write\('c'\): tensor 'weights\[1:3\]' holds"
    ):
        graph.create_host_write("c", c[1:3])  # engine.write_tensor would overwrite it
    assert "c" not in graph.host_writes
    # reading the constant is fine, and it holds its values
    assert runs(graph, device, Sequence(Copy(c, x)), "c").tolist() == [1.0, 2.0, 3.0, 4.0]


def test_fill_of_2_5_into_an_int_tensor_is_refused_not_stored_as_2(device):
    graph = Graph(device.target)
    k = mapped(graph, INT, [4], "k")
    prog = Sequence()
    with pytest.raises(GraphError, match=r"popops::fill: the value: 2.5 is not a whole number"):
        popops.fill(graph, k, 2.5, prog)
    popops.fill(graph, k, 2.0, prog)  # a whole float is exact
    graph.create_host_read("k", k)
    assert runs(graph, device, prog, "k").tolist() == [2, 2, 2, 2]


@pytest.mark.parametrize("dims", [[2], [5], [-3], [0, 2]])
def test_reduce_dims_out_of_range_are_refused_not_taken_modulo_the_rank(device, dims):
    graph = Graph(device.target)
    a = mapped(graph, FLOAT, [2, 3], "a")
    prog = Sequence()
    before = graph_state(graph, prog)
    with pytest.raises(ShapeError, match=r"popops::reduce: dimensions \[-?\d\] are outside 'a'"):
        popops.reduce(graph, a, dims, "add", prog)
    assert graph_state(graph, prog) == before
    # negative dims within the rank still count from the end: -1 is the last dimension
    out = popops.reduce(graph, a, [-1], "add", prog)
    graph.create_host_write("a", a)
    graph.create_host_read("out", out)
    engine = Engine(graph, prog)
    engine.load(device)
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    engine.write_tensor("a", values)
    engine.run(0)
    np.testing.assert_array_equal(engine.read_tensor("out"), values.sum(axis=1))


@pytest.mark.parametrize("stride", [2.5, (2.5, 1), (1, 2.0), True])
def test_a_convolution_stride_of_2_5_is_refused_not_truncated(device, stride):
    graph = Graph(device.target)
    image = mapped(graph, FLOAT, [1, 4, 4, 2], "image")
    kernel = mapped(graph, FLOAT, [3, 3, 2, 2], "kernel")
    prog = Sequence()
    before = graph_state(graph, prog)
    with pytest.raises(ShapeError, match=r"poplin::convolution: stride must be an int or"):
        poplin.convolution(graph, image, kernel, prog, stride=stride)
    assert graph_state(graph, prog) == before
