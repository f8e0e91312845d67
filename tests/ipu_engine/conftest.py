"""Fixtures for engine tests: small IPU Model devices, a helper to run a program, and one
to find the steps a named program lowered to."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, INT, Engine, Graph, IPUModel, Sequence, popops


@pytest.fixture
def device4():
    """An ipu2 with only 4 tiles: small enough to reason about by hand."""
    return IPUModel("ipu2", tiles_per_ipu=4).create_device()


@pytest.fixture
def ipu2():
    return IPUModel("ipu2").create_device()


def run_program(graph: Graph, device, prog, inputs: dict[str, np.ndarray] | None = None, reads=()):
    """Compile, load, write ``inputs`` through host-write handles, run, read ``reads``."""
    engine = Engine(graph, prog)
    engine.load(device)
    for name, value in (inputs or {}).items():
        engine.write_tensor(name, value)
    engine.run(0)
    return engine, {name: engine.read_tensor(name) for name in reads}


def steps_under(exe, program_name: str) -> list:
    """The lowered steps inside the program called ``program_name`` (via the program tree)."""
    nodes = exe.lowering.nodes

    def inside(index: int) -> bool:
        while index >= 0:
            if nodes[index].name == program_name:
                return True
            index = nodes[index].parent
        return False

    return [s for s in exe.steps if inside(s.facts["node"])]


# -- the bad-call tests' device and loaded engine (tests/ipu_engine/works.py) ----------------


@pytest.fixture
def device():
    return IPUModel("ipu2", tiles_per_ipu=4).create_device()


@pytest.fixture
def doubler(device):
    """A loaded engine computing y = x + x (FLOAT[4]) and k2 = k + k (INT[4])."""
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [4], "x")
    k = graph.add_variable(INT, [4], "k")
    graph.set_tile_mapping(x, 0)
    graph.set_tile_mapping(k, 2)
    prog = Sequence()
    y = popops.add(graph, x, x, prog, "y")
    k2 = popops.add(graph, k, k, prog, "k2")
    for name, t in (("x", x), ("k", k)):
        graph.create_host_write(name, t)
        graph.create_host_read(name, t)
    graph.create_host_read("y", y)
    graph.create_host_read("k2", k2)
    engine = Engine(graph, prog)
    engine.load(device)
    engine.write_tensor("x", [1, 2, 3, 4])
    engine.write_tensor("k", [5, 6, 7, 8])
    return engine
