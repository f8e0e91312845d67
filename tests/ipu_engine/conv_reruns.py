"""A convolution engine run again and again with new inputs, weights and biases, each run
checked against numpy's convolution: what the tests of calls kept from one run to the next
(``codelets/conv_kept.py``, the kept products and depthwise calls) share."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, poplin, poputil
from tests.ipu_engine.test_conv_groups import close, reference_conv

RNG = np.random.default_rng(43)


def conv_reruns(
    shapes: dict[str, tuple[int, ...]],
    runs: int,
    *,
    nchw: bool,
    tiles_per_ipu: int | None = None,
    padding: int = 0,
    groups: int = 1,
    options: dict[str, Any] | None = None,
) -> Engine:
    """``y = conv(x, w) + b`` (x ``shapes["x"]``, NCHW read through a dim shuffle when
    ``nchw``, w HWIO, stride 1), run ``runs`` times with new values, each run's y equal to
    numpy's; the engine."""
    target = {} if tiles_per_ipu is None else {"tiles_per_ipu": tiles_per_ipu}
    device = IPUModel("ipu2", **target).create_device()
    graph = Graph(device.target)
    t = {}
    for name, shape in shapes.items():
        t[name] = graph.add_variable(FLOAT, list(shape), name)
        poputil.map_tensor_linearly(graph, t[name])
        graph.create_host_write(name, t[name])
    prog = Sequence()
    image = t["x"].dim_shuffle([0, 2, 3, 1]) if nchw else t["x"]
    y = poplin.convolution(graph, image, t["w"], prog, "y", bias=t["b"], groups=groups,
                           padding=padding, options=options or {})  # fmt: skip
    graph.create_host_read("y", y)
    engine = Engine(graph, prog)
    engine.load(device)
    pads = ((padding, padding), (padding, padding))
    for _ in range(runs):
        values = {n: RNG.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
        for name, value in values.items():
            engine.write_tensor(name, value)
        engine.run(0)
        x = values["x"].transpose(0, 2, 3, 1) if nchw else values["x"]
        want = reference_conv(x, values["w"], (1, 1), pads, (1, 1), groups, values["b"])
        assert close(engine.read_tensor("y"), want, 1e-5)
    return engine


def runner_caches(engine: Engine) -> list[dict]:
    """What each compute set's runners kept between runs."""
    return [r.cache for plan in engine.executable.plans.values() for r in plan.runners]
