"""Fixtures for engine tests: small IPU Model devices and a helper to run a program."""

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
