"""A small engine-made report whose programs call a function: two engine programs, a
Function body run by three Calls, and one run of each program (two runs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ipu_engine import INT, Call, Engine, Execute, Graph, InOut, IPUModel, Sequence, Vertex


class Increment(Vertex):
    counter = InOut(INT, scalar=True)

    def compute(self) -> None:
        self.counter = self.counter + 1


def function_report(directory: Path) -> Path:
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    counter = graph.add_variable(INT, [], "counter")
    graph.set_tile_mapping(counter, 0)
    graph.create_host_write("counter", counter)
    inc = graph.add_compute_set("inc")
    graph.set_tile_mapping(graph.add_vertex(inc, Increment, counter=counter), 0)
    twice = graph.add_function(Sequence(Execute(inc), Execute(inc)), "twice")
    options = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    programs = [Sequence(Call(twice), Call(twice), name="calls"), Call(twice)]
    engine = Engine(graph, programs, options=options)
    engine.load(device)
    engine.write_tensor("counter", np.array(0))
    engine.run(0)
    engine.run(1)
    return next(p.parent for p in directory.rglob("profile.pop"))
