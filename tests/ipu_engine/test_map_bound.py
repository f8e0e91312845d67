"""``popops.map`` of max(_1, c) / min(_1, c) on floats as one C call a run, its views kept
(``codelets/map_bound.py``): ReLU6's two compute sets on an NCHW view of an NHWC
activation, run after run with new values, equal numpy's bit for bit; other expressions,
types and layouts take the general path with the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, HALF, Engine, Graph, IPUModel, Sequence, popops, poputil
from ipu_engine.codelets.map_bound import bound_of

RNG = np.random.default_rng(44)


def _relu6(channels: int, dtype=FLOAT):
    """An engine computing min(max(x, 0), 6) of the NCHW view of x [1, 12, 10, C]."""
    device = IPUModel("ipu2", tiles_per_ipu=16).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(dtype, [1, 12, 10, channels], "x")
    poputil.map_tensor_linearly(graph, x)
    graph.create_host_write("x", x)
    prog = Sequence()
    e = popops.expr
    low = popops.map(graph, e.max_(e._1, 0.0), [x.dim_shuffle([0, 3, 1, 2])], prog)
    y = popops.map(graph, e.min_(e._1, 6.0), [low], prog)
    graph.create_host_read("y", y)
    engine = Engine(graph, prog)
    engine.load(device)
    return engine


def _kept(engine) -> int:
    caches = [r.cache for plan in engine.executable.plans.values() for r in plan.runners]
    return sum("bound_views" in c for c in caches)


@pytest.mark.parametrize(
    ("channels", "dtype", "kept"), [(64, FLOAT, 2), (160, FLOAT, 1), (64, HALF, 0)]
)
def test_relu6_of_a_transposed_activation_is_numpys_run_after_run(channels, dtype, kept) -> None:
    engine = _relu6(channels, dtype)
    for _ in range(3):
        x = (RNG.standard_normal((1, 12, 10, channels)) * 8).astype(dtype.numpy_dtype)
        x.flat[::17] = -0.0
        x.flat[5] = np.nan
        engine.write_tensor("x", x)
        engine.run(0)
        want = np.ascontiguousarray(np.minimum(np.maximum(x.transpose(0, 3, 1, 2), 0), 6))
        got = engine.read_tensor("y")
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    # 160 channels: the maximum reads across many rows (the general path), the minimum not
    assert _kept(engine) == kept


def test_only_a_bound_of_the_first_input_by_a_float_is_one() -> None:
    assert bound_of("maximum(_1, 0.0)", np.dtype(np.float32)) == (0.0, True)
    assert bound_of("minimum(_1, -inf)", np.dtype(np.float32)) == (float("-inf"), False)
    for text in ("maximum(_1, _2)", "maximum((_1 + 1.0), 0.0)", "maximum(_2, 1.0)"):
        assert bound_of(text, np.dtype(np.float32)) is None
    assert bound_of("maximum(_1, 0.0)", np.dtype(np.float16)) is None
