"""After a bad call, the graph or engine still works: what test_bad_calls.py and
test_bad_host_data.py check after each refused call (the fixtures are in conftest.py)."""

from __future__ import annotations

import numpy as np

from ipu_engine import FLOAT, Engine, Graph, Sequence, popops


def graph_works(graph: Graph, device) -> None:
    """The graph still builds, compiles and runs a small program with the right result."""
    n = len(graph.variables)
    a = graph.add_variable(FLOAT, [4], f"a{n}")
    graph.set_tile_mapping(a, 1)
    prog = Sequence()
    b = popops.add(graph, a, a, prog, f"twice{n}")
    graph.create_host_write(f"a{n}", a)
    graph.create_host_read(f"b{n}", b)
    engine = Engine(graph, prog)
    engine.load(device)
    values = np.array([1.5, -2.0, 3.0, 0.25], np.float32)
    engine.write_tensor(f"a{n}", values)
    engine.run(0)
    np.testing.assert_array_equal(engine.read_tensor(f"b{n}"), 2 * values)


def engine_works(engine: Engine) -> None:
    """The engine still runs with the right results; earlier good writes are intact."""
    engine.run(0)
    np.testing.assert_array_equal(engine.read_tensor("y"), [2, 4, 6, 8])
    np.testing.assert_array_equal(engine.read_tensor("k2"), [10, 12, 14, 16])
