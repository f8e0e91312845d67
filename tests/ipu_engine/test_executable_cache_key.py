"""The executable cache's key: the same program gives the same key in any process, and a
change to the graph (tensors, tile mapping, compute sets, vertices, edges, state), the
programs, an option that changes compiling, the target or the engine gives another."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    Copy,
    Engine,
    Execute,
    Graph,
    Input,
    IPUModel,
    Output,
    Repeat,
    Sequence,
    State,
    Vertex,
)
from ipu_engine.common import version
from ipu_engine.poplar.compiler import cache_key
from ipu_engine.poplar.compiler.executable import check_programs
from ipu_engine.poplar.options import parse_options
from tests.conftest import ROOT
from tests.ipu_engine.cache_programs import bert_graph, run_bert


class Scale(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT)
    factor = State(FLOAT, 1.0)

    def compute(self):
        self.out[:] = self.in_ * self.factor


def scale_program(
    tiles: int = 4,
    version: str = "ipu2",
    y_tile: int = 1,
    factor: float = 2.0,
    edge_row: int = 0,
    repeat: int = 1,
    perf: int | None = None,
    extra_copy: bool = False,
) -> tuple[Graph, Sequence]:
    """x[2,3] scaled into y by one vertex on tile 0; each argument changes one thing."""
    graph = Graph(IPUModel(version, tiles_per_ipu=tiles).create_device().target)
    x = graph.add_variable(FLOAT, [2, 3], "x")
    y = graph.add_variable(FLOAT, [2, 3], "y")
    graph.set_tile_mapping(x, 0)
    graph.set_tile_mapping(y, y_tile)
    graph.create_host_write("x", x)
    graph.create_host_read("y", y)
    cs = graph.add_compute_set("scale")
    v = graph.add_vertex(cs, Scale, {"in": x[edge_row], "out": y[0]}, factor=factor)
    graph.set_tile_mapping(v, 0)
    if perf is not None:
        graph.set_perf_estimate(v, perf)
    prog = Sequence(Repeat(repeat, Execute(cs)), name="scale")
    if extra_copy:
        prog.add(Copy(y[1], x[1]))
    return graph, prog


def key_of(graph: Graph, prog, **options: str) -> str:
    programs = check_programs(graph, prog)
    return cache_key.executable_key(graph, programs, parse_options(options, environ={}))


BASE = key_of(*scale_program())


def test_the_same_program_built_twice_has_the_same_key():
    assert key_of(*scale_program()) == BASE


@pytest.mark.parametrize(
    "change",
    [
        {"y_tile": 2},  # tile mapping
        {"factor": 3.0},  # vertex state
        {"edge_row": 1},  # a vertex edge
        {"perf": 77},  # a vertex's cycle estimate
        {"repeat": 2},  # a program's field
        {"extra_copy": True},  # another program
        {"tiles": 8},  # the target
        {"version": "ipu1"},
    ],
    ids=str,
)
def test_a_change_to_graph_programs_or_target_changes_the_key(change):
    assert key_of(*scale_program(**change)) != BASE


def test_options_that_change_compiling_change_the_key_and_output_options_do_not(tmp_path):
    graph, prog = scale_program()
    assert key_of(graph, prog, **{"debug.instrument": "true"}) != BASE
    assert key_of(graph, prog, **{"autoReport.outputExecutionProfile": "true"}) != BASE
    assert key_of(graph, prog, **{"autoReport.directory": str(tmp_path)}) == BASE
    assert key_of(graph, prog, **{"executableCache.directory": str(tmp_path)}) == BASE


def test_another_engine_version_or_source_changes_the_key(monkeypatch):
    monkeypatch.setattr(version, "__version__", "99.0.0")
    cache_key.engine_fingerprint.cache_clear()
    try:
        assert key_of(*scale_program()) != BASE
    finally:
        monkeypatch.undo()
        cache_key.engine_fingerprint.cache_clear()
    assert key_of(*scale_program()) == BASE


def test_another_constant_value_changes_the_key():
    keys = set()
    for value in (1.0, 2.0):
        graph, prog = scale_program()
        c = graph.add_constant(FLOAT, [3], value, "c")
        graph.set_tile_mapping(c, 0)
        prog.add(Copy(c, graph.host_writes["x"][1]))
        keys.add(key_of(graph, prog))
    assert len(keys) == 2


def test_editing_a_user_codelet_changes_its_fingerprint():
    class Scale(Vertex):  # same name, other cycle estimate
        in_ = Input(FLOAT)
        out = Output(FLOAT)
        factor = State(FLOAT, 1.0)

        def compute(self):
            self.out[:] = self.in_ * self.factor

        @classmethod
        def estimate_cycles(cls, sizes):
            return np.full(len(sizes), 1000)

    edited = cache_key.codelet_fingerprint(Scale)
    assert edited != cache_key.codelet_fingerprint(globals()["Scale"])


_KEY_SCRIPT = """
from tests.ipu_engine.cache_programs import bert_graph
from ipu_engine.poplar.compiler.cache_key import executable_key
from ipu_engine.poplar.compiler.executable import check_programs
from ipu_engine.poplar.options import parse_options
device, graph, prog, tensors = bert_graph()
print(executable_key(graph, check_programs(graph, prog), parse_options({}, environ={})))
"""


def test_the_key_is_the_same_in_another_process():
    """No address or hash seed may leak into the key (built-in expression codelets are
    classes made at run time)."""
    keys = [
        subprocess.run(
            [sys.executable, "-c", _KEY_SCRIPT],
            cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout.strip()
        for seed in (1, 2)
    ]  # fmt: skip
    _, graph, prog, _ = bert_graph()
    assert keys[0] == keys[1] == key_of(graph, prog)


def test_a_changed_program_misses_and_is_compiled_into_its_own_entry(tmp_path):
    options = {"executableCache.directory": str(tmp_path)}
    outputs = []
    for heads in (2, 4, 2):  # the third engine is the first program again: a hit
        device, graph, prog, tensors = bert_graph(sizes={"seq": 8, "hidden": 16, "heads": heads,
                                                         "ffn": 32})  # fmt: skip
        outputs.append(run_bert(Engine(graph, prog, options=options), device, tensors))
    assert len(list(tmp_path.glob("*.ipuexe"))) == 2
    assert not np.array_equal(outputs[0], outputs[1])  # two heads or four: other results
    assert np.array_equal(outputs[0], outputs[2])
