"""``popops.map`` of max(_1, c) / min(_1, c) on floats as one C call a run, its views kept
(``codelets/map_bound.py``): ReLU6's two compute sets on an NCHW view of an NHWC
activation, run after run with new values, equal numpy's bit for bit; other expressions,
types and layouts take the general path with the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, HALF, Engine, Graph, IPUModel, Sequence, popops, poputil
from ipu_engine.codelets.map_bound import bounds_of

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


def test_only_bounds_of_the_first_input_by_floats_are_bounds() -> None:
    f32 = np.dtype(np.float32)
    assert bounds_of("maximum(_1, 0.0)", f32) == [(0.0, True)]
    assert bounds_of("minimum(_1, -inf)", f32) == [(float("-inf"), False)]
    # a clamp: the inner bound first
    assert bounds_of("minimum(maximum(_1, 0.0), 6.0)", f32) == [(0.0, True), (6.0, False)]
    assert bounds_of("maximum(minimum(_1, 1.5), -2.0)", f32) == [(1.5, False), (-2.0, True)]
    for text in (
        "maximum(_1, _2)",
        "maximum((_1 + 1.0), 0.0)",
        "maximum(_2, 1.0)",
        "minimum(maximum(_2, 0.0), 6.0)",
        "minimum(maximum(_1, 0.0), _2)",
        "minimum(maximum(maximum(_1, 0.0), 1.0), 6.0)",
    ):
        assert bounds_of(text, f32) is None, text
    assert bounds_of("maximum(_1, 0.0)", np.dtype(np.float16)) is None


def _onnx_clip(channels: int, low: float | None, high: float | None):
    """An ONNX model Clip(Transpose(x)) of x [1, 12, 10, C] (an NHWC activation read as
    NCHW, as a depthwise convolution's output meets ReLU6), its bounds initializers."""
    from onnx import TensorProto, helper, numpy_helper

    names = ["t", "low" if low is not None else "", "high" if high is not None else ""]
    while names[-1] == "":
        names.pop()
    bounds = [
        numpy_helper.from_array(np.array(v, np.float32), n)
        for n, v in (("low", low), ("high", high))
        if v is not None
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
            helper.make_node("Clip", names, ["y"], name="relu6"),
        ],
        "clip",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 10, channels])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 12, 10])],
        bounds,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("on_team", [True, False])
@pytest.mark.parametrize(("low", "high"), [(0.0, 6.0), (-0.5, None), (None, 0.25)])
def test_an_onnx_clip_by_constants_is_one_map_equal_to_numpy_run_after_run(
    low, high, on_team, monkeypatch
) -> None:
    """On the team's threads, and without it (``kernels.bound`` calls on the caller)."""
    from ipu_engine.codelets import team
    from ipu_engine.onnx import InferenceSession

    if not on_team:
        monkeypatch.setattr(team, "available", lambda: False)
    session = InferenceSession(_onnx_clip(64, low, high))
    for _ in range(3):
        x = (RNG.standard_normal((1, 12, 10, 64)) * 8).astype(np.float32)
        x.flat[::17] = -0.0
        x.flat[5] = np.nan
        (got,) = session.run(None, {"x": x})
        want = x.transpose(0, 3, 1, 2)
        want = want if low is None else np.maximum(want, np.float32(low))
        want = want if high is None else np.minimum(want, np.float32(high))
        assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
    engine = session.last.engine
    maps = [cs.name for cs in engine.graph.compute_sets if "relu6" in cs.name]
    assert len(maps) == 1, maps  # one pass over memory, as PopART's clamp
    assert _kept(engine) == 1  # run as C bound steps on views of memory
