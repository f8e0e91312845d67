"""Bad engine calls are EngineErrors naming the argument and the problem, never a raw Python
error nor a silently wrong value, and the graph or engine keeps working after each one."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    INT,
    Copy,
    Engine,
    Graph,
    OptionError,
    Output,
    ProgramError,
    Repeat,
    Sequence,
    ShapeError,
    TileMappingError,
    Vertex,
    popops,
)
from ipu_engine.poplar import host_memory
from ipu_engine.poplar.compiler.program_tree import MAX_PROGRAM_DEPTH
from tests.ipu_engine.works import graph_works


class Zero(Vertex):
    out = Output(FLOAT)

    def compute(self):
        self.out[:] = 0


# -- shapes ----------------------------------------------------------------------------------


def test_a_variable_of_a_trillion_elements_is_refused_even_on_a_huge_host(device, monkeypatch):
    # a host reporting a petabyte free: the bound is the target's, not this machine's
    monkeypatch.setattr(host_memory, "available_bytes", lambda: 10**15)
    monkeypatch.setattr(host_memory, "_last", [(-1.0, None)])
    graph = Graph(device.target)
    with pytest.raises(ShapeError, match=r"tensor 'huge' of shape \[1000000000000\] needs") as e:
        graph.add_variable(FLOAT, [10**12], "huge")
    assert "16 times all the tile memory of ipu2 (1 IPU, 4 tiles)" in str(e.value)
    assert graph.variables == []
    graph_works(graph, device)


def test_a_shape_whose_product_overflows_int64_is_refused(device):
    graph = Graph(device.target)
    with pytest.raises(ShapeError, match=r"has 1208925819614629174706176 elements, more than"):
        graph.add_variable(FLOAT, [2**40, 2**40], "wide")
    graph_works(graph, device)


@pytest.mark.parametrize("shape", [[2.5], [2, 2.0], [True], "4", None, [[2]], {"a": 2}])
def test_a_shape_of_non_integers_is_refused_not_truncated(device, shape):
    graph = Graph(device.target)
    with pytest.raises(ShapeError, match="tensor 'v'.*shape") as e:
        graph.add_variable(FLOAT, shape, "v")
    assert "integer" in str(e.value) or "a shape is a list of integers" in str(e.value)
    assert graph.variables == []
    graph_works(graph, device)


def test_a_reshape_to_non_integers_is_refused_not_truncated(device):
    graph = Graph(device.target)
    t = graph.add_variable(FLOAT, [4], "t")
    with pytest.raises(ShapeError, match="reshape of tensor 't': dimension 1 of shape must be"):
        t.reshape([2, 2.0])
    assert t.reshape([2, 2]).shape == (2, 2)
    graph.set_tile_mapping(t.reshape([2, 2])[1], 3)
    graph.set_tile_mapping(t[0:2], 2)
    graph_works(graph, device)


# -- tile numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tile", "said"),
    [
        (2.7, "got 2.7 (float)"),
        ("3", "got '3' (str)"),
        (True, "got the boolean True"),
        (np.float64(1.0), "got np.float64(1.0)"),
    ],
)
def test_a_tile_that_is_not_an_integer_is_refused(device, tile, said):
    graph = Graph(device.target)
    t = graph.add_variable(FLOAT, [4], "t")
    with pytest.raises(TileMappingError, match="tensor 't': the tile must be an integer") as e:
        graph.set_tile_mapping(t, tile)
    assert said in str(e.value)
    assert (graph.tile_array(t) == -1).all()  # nothing was mapped, not tile 1
    cs = graph.add_compute_set("cs")
    vertex = graph.add_vertex(cs, Zero, {"out": t})
    with pytest.raises(TileMappingError, match="vertex 0 .*: the tile must be an integer"):
        graph.set_tile_mapping(vertex, tile)
    graph.set_tile_mapping(t, 3)
    graph.set_tile_mapping(vertex, 3)
    graph_works(graph, device)


def test_per_tile_intervals_of_non_integers_are_refused(device):
    graph = Graph(device.target)
    t = graph.add_variable(FLOAT, [4], "t")
    for bad in ([[(0, 2.5)]], [[(0,)]], [[0, 4]], [["0", "4"]]):
        with pytest.raises(TileMappingError, match="tensor 't'"):
            graph.set_tile_mapping(t, bad)
    with pytest.raises(TileMappingError, match="tiles must be integers, got an array of float"):
        graph.set_tile_mapping_array(t, np.array([0.0, 1.0, 1.5, 2.0]))
    graph.set_tile_mapping(t, [[(0, 2)], [(2, 4)]])
    assert graph.tile_array(t).tolist() == [0, 0, 1, 1]
    graph_works(graph, device)


# -- programs ----------------------------------------------------------------------------------


def sequences_work(device, outer: Sequence, inner: Sequence) -> None:
    """``outer`` (holding ``inner``) still compiles and runs: an increment added to
    ``inner`` runs once per time ``inner`` runs."""
    graph = Graph(device.target)
    x = graph.add_variable(INT, [1], "x")
    one = graph.add_constant(INT, [1], 1, "one")
    for t in (x, one):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("x", x)
    graph.create_host_read("x", x)
    popops.add_in_place(graph, x, one, inner)
    engine = Engine(graph, outer)
    engine.load(device)
    engine.write_tensor("x", [3])
    engine.run(0)
    assert engine.read_tensor("x").tolist() == [4]


def test_a_sequence_containing_itself_is_refused_when_added(device):
    outer = Sequence(name="outer")
    with pytest.raises(ProgramError, match=r"Sequence\(outer\) contains this sequence"):
        outer.add(outer)
    assert outer.programs == []
    sequences_work(device, outer, outer)


def test_mutually_nested_sequences_are_refused_when_added(device):
    a, b = Sequence(name="a"), Sequence(name="b")
    a.add(b)
    with pytest.raises(ProgramError, match=r"Sequence\(b\) -> Sequence\(a\) -> Sequence\(b\)"):
        b.add(a)
    assert b.programs == []
    sequences_work(device, a, b)


def test_a_repeat_in_its_own_body_is_refused_when_added(device):
    body = Sequence(name="body")
    loop = Repeat(1, body, name="loop")
    with pytest.raises(ProgramError, match=r"Repeat\(loop\) contains this sequence"):
        body.add(loop)
    sequences_work(device, Sequence(loop), body)


def test_cycles_made_behind_add_s_back_are_refused_at_compile(device):
    graph = Graph(device.target)
    body = Sequence(name="body")
    loop = Repeat(2, body, name="loop")
    body.programs.append(loop)  # edited directly: only the compiler can see it
    with pytest.raises(ProgramError, match=r"Repeat\(loop\) contains itself"):
        Engine(graph, Sequence(loop))
    a, b = Sequence(name="a"), Sequence(name="b")
    a.programs.append(b)
    b.programs.append(a)
    with pytest.raises(ProgramError, match=r"contains itself .*Sequence\(a\) -> Sequence\(b\)"):
        Engine(graph, a)
    graph_works(graph, device)


def test_programs_nested_deeper_than_the_engine_lowers_are_refused_at_compile(device):
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [2], "x")
    graph.set_tile_mapping(x, 0)
    program = Copy(x, x)
    for _ in range(MAX_PROGRAM_DEPTH * 20):
        program = Sequence(program)
    with pytest.raises(ProgramError, match=f"nested more than {MAX_PROGRAM_DEPTH} deep"):
        Engine(graph, program)
    graph_works(graph, device)


def test_shared_subprograms_run_at_each_place_and_a_program_bomb_is_refused(device):
    graph = Graph(device.target)
    x = graph.add_variable(INT, [1], "x")
    one = graph.add_constant(INT, [1], 1, "one")
    for t in (x, one):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("x", x)
    graph.create_host_read("x", x)
    step = Sequence()
    popops.add_in_place(graph, x, one, step)  # x += 1
    program = step
    for _ in range(8):  # each level holds the one below twice: 2**8 increments
        program = Sequence(program, program)
    engine = Engine(graph, program)
    engine.load(device)
    engine.write_tensor("x", [3])
    engine.run(0)
    assert engine.read_tensor("x").tolist() == [3 + 2**8]
    for _ in range(40):  # 2**48 programs to lower: refused, not hours of lowering
        program = Sequence(program, program)
    with pytest.raises(ProgramError, match=r"would lower to \d+ programs .* more than the 5000000"):
        Engine(graph, program)
    graph_works(graph, device)


@pytest.mark.parametrize("arg", [None, 3, "prog"])
def test_sequence_of_something_not_a_program_is_refused(device, arg):
    with pytest.raises(ProgramError, match="Sequence argument 0 must be a program or a list"):
        Sequence(arg)
    inner = Sequence()
    sequences_work(device, Sequence(inner), inner)


@pytest.mark.parametrize("count", [2.5, "2", True, -1, 2**32])
def test_a_repeat_count_that_is_not_a_count_is_refused_not_truncated(device, count):
    body = Sequence()
    with pytest.raises(ProgramError, match="Repeat count must be"):
        Repeat(count, body)
    sequences_work(device, Repeat(1, body), body)


# -- engine options ----------------------------------------------------------------------------


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_options_nested_a_million_deep_are_refused(device, monkeypatch):
    graph = Graph(device.target)
    with pytest.raises(OptionError, match="'autoReport.all': the value must be a string, number"):
        Engine(graph, Sequence(), options={"autoReport.all": _nested(10**6)})
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", "[" * 10**6 + "]" * 10**6)
    with pytest.raises(OptionError, match="POPLAR_ENGINE_OPTIONS is nested too deeply"):
        Engine(graph, Sequence())
    deep = {"autoReport.all": json.loads(json.dumps(_nested(50)))}
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps(deep))
    with pytest.raises(OptionError, match="got a list"):
        Engine(graph, Sequence())
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS")
    graph_works(graph, device)


def test_a_nul_in_the_report_directory_is_an_option_error(device, tmp_path):
    graph = Graph(device.target)
    options = {"autoReport.all": "true", "autoReport.directory": f"{tmp_path}/a\0b"}
    with pytest.raises(OptionError, match="'autoReport.directory': .* holds a NUL"):
        Engine(graph, Sequence(), options=options)
    graph_works(graph, device)
