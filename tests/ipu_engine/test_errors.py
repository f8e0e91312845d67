"""Errors that teach: each names the tensor, vertex, stream or handle and the fix."""

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    INT,
    Copy,
    Engine,
    EngineError,
    Execute,
    ExecutionError,
    Graph,
    HandleError,
    Input,
    Output,
    PrintTensor,
    Sequence,
    ShapeError,
    StreamError,
    TileMappingError,
    TypeMismatchError,
    Vertex,
    VertexConnectionError,
)


class Double(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT)

    def compute(self):
        self.out[:] = 2 * self.in_


class Exploding(Vertex):
    inout = Output(FLOAT)

    def compute(self):
        self.inout[:] = 99
        raise ValueError("boom")


def test_a_tensor_with_no_tile_mapping_is_named_at_compile(device4):
    graph = Graph(device4.target)
    v = graph.add_variable(FLOAT, [4], "weights")
    graph.set_tile_mapping(v[0:2], 0)
    with pytest.raises(TileMappingError) as info:
        Engine(graph, Sequence())
    message = str(info.value)
    assert "'weights'" in message and "2 of 4 elements" in message and "flat element 2" in message
    assert "set_tile_mapping" in message


def test_a_tile_outside_the_target_is_refused_when_mapping(device4):
    graph = Graph(device4.target)
    v = graph.add_variable(FLOAT, [4], "v")
    with pytest.raises(
        TileMappingError, match="tensor 'v': tile 1500 is outside the target.*tiles 0..3"
    ):
        graph.set_tile_mapping(v, 1500)
    cs = graph.add_compute_set("cs")
    vertex = graph.add_vertex(cs, Double)
    with pytest.raises(TileMappingError, match="vertex 0 \\(Double\\).*tile 4 is outside"):
        graph.set_tile_mapping(vertex, 4)


def test_an_unconnected_vertex_field_is_named_at_compile(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [4], "x")
    graph.set_tile_mapping(x, 0)
    cs = graph.add_compute_set("doubling")
    v = graph.add_vertex(cs, Double, {"in": x})
    graph.set_tile_mapping(v, 0)
    with pytest.raises(VertexConnectionError) as info:
        Engine(graph, Execute(cs))
    message = str(info.value)
    assert "vertex 0 (Double) in compute set 'doubling'" in message
    assert "field 'out' is not connected" in message and "graph.connect" in message


def test_an_unmapped_vertex_is_named_at_compile(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [4], "x")
    graph.set_tile_mapping(x, 0)
    cs = graph.add_compute_set("doubling")
    graph.add_vertex(cs, Double, {"in": x, "out": x})
    with pytest.raises(
        TileMappingError, match="vertex 0 \\(Double\\) in compute set 'doubling' has no tile"
    ):
        Engine(graph, Execute(cs))


def test_wrong_connections_are_refused_when_connecting(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [4], "x")
    ints = graph.add_variable(INT, [4], "ints")
    cs = graph.add_compute_set("cs")
    v = graph.add_vertex(cs, Double)
    with pytest.raises(
        VertexConnectionError, match="has no field 'input'; its fields are: in, out"
    ):
        graph.connect(v["input"], x)
    with pytest.raises(
        TypeMismatchError, match="field 'in' is Input<Vector<float>>.*'ints' is INT"
    ):
        graph.connect(v["in"], ints)
    graph.connect(v["in"], x)
    with pytest.raises(VertexConnectionError, match="field 'in' is already connected"):
        graph.connect(v["in"], x)


def test_copies_between_mismatched_tensors_fail_at_compile(device4):
    graph = Graph(device4.target)
    a = graph.add_variable(FLOAT, [4], "a")
    b = graph.add_variable(FLOAT, [5], "b")
    i = graph.add_variable(INT, [4], "i")
    for t in (a, b, i):
        graph.set_tile_mapping(t, 0)
    with pytest.raises(ShapeError, match=r"Copy from 'a' \(4,\) to 'b' \(5,\)"):
        Engine(graph, Copy(a, b))
    with pytest.raises(TypeMismatchError, match="Copy from 'a' \\(FLOAT\\) to 'i' \\(INT\\)"):
        Engine(graph, Copy(a, i))


def test_running_with_an_unconnected_stream_names_it_and_changes_nothing(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(INT, [3], "x")
    graph.set_tile_mapping(x, 0)
    graph.create_host_write("x", x)
    graph.create_host_read("x", x)
    fifo = graph.add_host_to_device_fifo("feed", INT, 3)
    engine = Engine(graph, Copy(fifo, x))
    engine.load(device4)
    engine.write_tensor("x", np.array([1, 2, 3]))
    with pytest.raises(
        StreamError, match="stream 'feed' has no host data connected.*connect_stream\\('feed'"
    ):
        engine.run()
    assert engine.read_tensor("x").tolist() == [1, 2, 3]
    engine.connect_stream("feed", np.array([7, 8, 9], dtype=np.int32))
    engine.run()
    assert engine.read_tensor("x").tolist() == [7, 8, 9]


def test_stream_buffers_of_the_wrong_size_are_refused(device4):
    graph = Graph(device4.target)
    graph.add_host_to_device_fifo("feed", INT, 4)
    engine = Engine(graph, Sequence())
    with pytest.raises(StreamError, match="stream 'feed' moves 4 elements per copy; .* has 6"):
        engine.connect_stream("feed", np.zeros(6, dtype=np.int32))
    with pytest.raises(StreamError, match="no stream named 'food'"):
        engine.connect_stream("food", np.zeros(4, dtype=np.int32))


def test_host_handles_are_checked(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [2, 2], "x")
    graph.set_tile_mapping(x, 0)
    graph.create_host_write("x-write", x)
    engine = Engine(graph, PrintTensor(x))
    with pytest.raises(EngineError, match="not loaded; call engine.load"):
        engine.write_tensor("x-write", np.zeros(4))
    engine.load(device4)
    with pytest.raises(HandleError, match="no host write handle 'y'.*known: x-write"):
        engine.write_tensor("y", np.zeros(4))
    with pytest.raises(HandleError, match="3 values given for tensor 'x' of shape \\(2, 2\\)"):
        engine.write_tensor("x-write", np.zeros(3))
    with pytest.raises(HandleError, match="no host read handle 'x-write'"):
        engine.read_tensor("x-write")


def test_a_failed_run_restores_every_tensor_and_the_engine_stays_usable(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [4], "x")
    y = graph.add_variable(FLOAT, [4], "y")
    for t in (x, y):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("x", x)
    graph.create_host_read("x", x)
    graph.create_host_read("y", y)
    ok = graph.add_compute_set("double")
    graph.set_tile_mapping(graph.add_vertex(ok, Double, {"in": x, "out": x}), 0)
    bad = graph.add_compute_set("explode")
    graph.set_tile_mapping(graph.add_vertex(bad, Exploding, inout=y), 0)
    engine = Engine(graph, [Sequence(Execute(ok), Execute(bad)), Execute(ok)])
    engine.load(device4)
    engine.write_tensor("x", np.array([1, 2, 3, 4]))
    with pytest.raises(
        ExecutionError,
        match="vertex 1 \\(Exploding\\) on tile 0 in compute set 'explode' raised ValueError: boom",
    ):
        engine.run(0)
    assert engine.read_tensor("x").tolist() == [1, 2, 3, 4]  # the first Execute was undone
    assert engine.read_tensor("y").tolist() == [0, 0, 0, 0]
    engine.run(1)
    assert engine.read_tensor("x").tolist() == [2, 4, 6, 8]


def test_run_index_and_device_are_checked(device4, ipu2):
    graph = Graph(device4.target)
    engine = Engine(graph, Sequence())
    with pytest.raises(
        EngineError,
        match=r"made for ipu2 \(1 IPU, 4 tiles\) but the device is ipu2 \(1 IPU, 1472 tiles\)",
    ):
        engine.load(ipu2)
    engine.load(device4)
    with pytest.raises(EngineError, match="run\\(3\\): the engine has 1 program"):
        engine.run(3)
