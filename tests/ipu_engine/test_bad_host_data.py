"""Bad data written to tensors, constants and streams: an EngineError naming the handle or
stream and the problem, never a value converted with loss, and the engine keeps working."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    INT,
    Copy,
    Engine,
    Execute,
    Graph,
    GraphError,
    HandleError,
    InOut,
    Repeat,
    Sequence,
    State,
    StreamError,
    Vertex,
    VertexConnectionError,
)
from tests.ipu_engine.works import engine_works

# -- data written to tensors and streams -----------------------------------------------------


@pytest.mark.parametrize(
    ("handle", "data", "said"),
    [
        ("x", ["1", "2", "3", "4"], "expected numbers, got an array of <U1"),
        ("x", "1234", "expected numbers, got str"),
        ("x", {"a": 1}, "expected numbers, got dict"),
        ("x", [[1, 2], [3]], "not an array of numbers"),
        ("x", [1, 2, 3, 1j], "complex values cannot be stored in a FLOAT tensor"),
        ("x", [1e300, 0, 0, 0], "1e+300 is outside the range of FLOAT"),
        ("k", [2**40, 0, 0, 0], "1099511627776 is outside the range of INT"),
        ("k", [-(2**31) - 1, 0, 0, 0], "-2147483649 is outside the range of INT"),
        ("k", [2**70, 0, 0, 0], "integers beyond 64 bits"),
        ("k", [1.5, 2, 3, 4], "1.5 is not a whole number; a INT tensor holds integers"),
        ("k", [np.inf, 2, 3, 4], "infinity or NaN cannot be stored in a INT tensor"),
        ("k", [np.nan, 2, 3, 4], "infinity or NaN cannot be stored in a INT tensor"),
    ],
)
def test_write_tensor_refuses_data_it_would_change(doubler, handle, data, said):
    with pytest.raises(HandleError, match=f"write_tensor\\('{handle}'\\)") as e:
        doubler.write_tensor(handle, data)
    assert said in str(e.value)
    engine_works(doubler)  # the earlier values are intact


def test_write_tensor_stores_legal_ieee_values_and_whole_floats_exactly(doubler):
    doubler.write_tensor("x", [np.inf, -np.inf, np.nan, 1e-45])
    doubler.write_tensor("k", [1.0, -2.0, 2.0**31 - 1, True])
    x = doubler.read_tensor("x")
    assert np.isposinf(x[0]) and np.isneginf(x[1]) and np.isnan(x[2]) and x[3] > 0
    assert doubler.read_tensor("k").tolist() == [1, -2, 2**31 - 1, 1]
    doubler.write_tensor("x", [1, 2, 3, 4])
    doubler.write_tensor("k", [5, 6, 7, 8])
    engine_works(doubler)


def test_read_tensor_into_a_read_only_array_is_refused_and_out_is_checked(doubler):
    out = np.zeros(4, np.float32)
    out.flags.writeable = False
    with pytest.raises(HandleError, match=r"read_tensor\('x'\): out is a read-only array"):
        doubler.read_tensor("x", out=out)
    with pytest.raises(HandleError, match="out must be a numpy array, got list"):
        doubler.read_tensor("x", out=[0, 0, 0, 0])
    with pytest.raises(HandleError, match="an out array of int16 cannot hold its values"):
        doubler.read_tensor("x", out=np.zeros(4, np.int16))
    strided = np.zeros(8, np.float64)[::2]  # a strided view: results must land in it
    doubler.read_tensor("x", out=strided)
    assert strided.tolist() == [1, 2, 3, 4]
    engine_works(doubler)


@pytest.fixture
def int_stream(device):
    """An engine that streams INT[2] from the host into k and back out, twice."""
    graph = Graph(device.target)
    k = graph.add_variable(INT, [2], "k")
    graph.set_tile_mapping(k, 0)
    into = graph.add_host_to_device_fifo("in", INT, 2)
    out = graph.add_device_to_host_fifo("out", INT, 2)
    engine = Engine(graph, Repeat(2, Sequence(Copy(into, k), Copy(k, out))))
    engine.load(device)
    return engine


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (np.array([1.5, 2.0, 3.0, 4.0]), "1.5 is not a whole number"),
        ([2**40, 0], "1099511627776 is outside the range of INT"),
        (np.array([1, 2, 3, 4], complex), "complex values cannot be stored"),
        (["1", "2"], "expected numbers"),
        ([np.inf, 1.0], "infinity or NaN cannot be stored in a INT tensor"),
    ],
)
def test_stream_data_that_would_change_is_refused(int_stream, data, said):
    with pytest.raises(StreamError, match="stream 'in': the host data") as e:
        int_stream.connect_stream("in", data)
    assert said in str(e.value)
    # whole floats are exact: accepted and streamed as the integers they are
    int_stream.connect_stream("in", np.array([1.0, -2.0, 3.0, 2.0**31 - 1]))
    results = np.zeros(4, np.int32)
    int_stream.connect_stream("out", results)
    int_stream.run(0)
    assert results.tolist() == [1, -2, 3, 2**31 - 1]


def test_a_device_to_host_stream_needs_a_numpy_array(int_stream):
    with pytest.raises(StreamError, match="connect a numpy array of dtype int32, not a list"):
        int_stream.connect_stream("out", [0, 0])


class Scale(Vertex):
    x = InOut(FLOAT)
    factor = State(INT, 1)

    def compute(self):
        self.x[:] = self.x * self.factor


@pytest.mark.parametrize(
    ("value", "said"),
    [(2.5, "2.5 is not a whole number"), (2**40, "outside the range of INT"),
     ("3", "expected numbers"), ([1, 2], "holds one value, got 2")],
)  # fmt: skip
def test_vertex_state_values_that_would_change_are_refused(device, value, said):
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [2], "x")
    graph.set_tile_mapping(x, 0)
    cs = graph.add_compute_set("scale")
    vertex = graph.add_vertex(cs, Scale, {"x": x})
    graph.set_tile_mapping(vertex, 0)
    with pytest.raises(VertexConnectionError, match="state field 'factor'") as e:
        graph.set_initial_value(vertex["factor"], value)
    assert said in str(e.value)
    with pytest.raises(GraphError, match="a cycle estimate must be an integer"):
        graph.set_perf_estimate(vertex, "many")
    graph.set_initial_value(vertex["factor"], 3.0)  # a whole float is exact
    graph.create_host_write("x", x)
    graph.create_host_read("x", x)
    engine = Engine(graph, Execute(cs))
    engine.load(device)
    engine.write_tensor("x", [1.5, -2])
    engine.run(0)
    assert engine.read_tensor("x").tolist() == [4.5, -6]
