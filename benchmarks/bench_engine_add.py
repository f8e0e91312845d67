"""Element-wise add of two 10M-float tensors mapped linearly over 1472 tiles:
engine ``run`` time over plain numpy ``a + b`` time, measured side by side."""

from __future__ import annotations

import numpy as np

from benchmarks._timing import median_seconds, report
from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, popops, poputil

N = 10_000_000


def main() -> None:
    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [N], "a")
    b = graph.add_variable(FLOAT, [N], "b")
    poputil.map_tensor_linearly(graph, a)
    poputil.map_tensor_linearly(graph, b)
    graph.create_host_write("a", a)
    graph.create_host_write("b", b)
    prog = Sequence()
    out = popops.add(graph, a, b, prog, "sum")
    graph.create_host_read("out", out)
    engine = Engine(graph, prog)
    engine.load(device)
    rng = np.random.default_rng(0)
    ha = rng.standard_normal(N, dtype=np.float32)
    hb = rng.standard_normal(N, dtype=np.float32)
    engine.write_tensor("a", ha)
    engine.write_tensor("b", hb)

    engine_s = median_seconds(lambda: engine.run(0))
    numpy_s = median_seconds(lambda: ha + hb)
    assert np.array_equal(engine.read_tensor("out"), ha + hb)
    print(f"engine run {engine_s * 1e3:.1f} ms, numpy a + b {numpy_s * 1e3:.1f} ms")
    ratio = engine_s / numpy_s
    report("engine run / numpy, 10M-float add over 1472 tiles", ratio, "x", "<= 3x", ratio <= 3)


if __name__ == "__main__":
    main()
