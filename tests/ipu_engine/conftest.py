"""Fixtures for engine tests: small IPU Model devices, a helper to run a program, and one
to find the steps a named program lowered to."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import Engine, Graph, IPUModel


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
