"""A compute set whose codelet said its run is one kept call (``VertexBatch.repeat``) runs
that call alone while memory is the same arrays: no batch made, no ``compute_batch``
called, and memory's values of that run read. Checked on a MobileNet-style block (a
depthwise convolution, a Clip, a pointwise convolution and its reduction) against
onnxruntime, run after run with new inputs; with memory's arrays replaced, the compute
sets find their views again."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

from benchmarks.bench_depthwise import mobilenet_block
from ipu_engine.onnx import InferenceSession
from ipu_engine.poplar.compiler import vertex_plans

RNG = np.random.default_rng(49)
CHANNELS, SIZE = 64, 12  # the benchmark's block (``bench_depthwise``) on a small image


def test_kept_compute_sets_repeat_their_call_alone_reading_each_runs_values(monkeypatch) -> None:
    made = []

    class CountedBatch(vertex_plans.VertexBatch):
        def __init__(self, *args, **kwargs) -> None:
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(vertex_plans, "VertexBatch", CountedBatch)
    model = mobilenet_block(CHANNELS, SIZE)
    session = InferenceSession(model)
    reference = ort.InferenceSession(model.SerializeToString())
    inputs = [(RNG.standard_normal((1, CHANNELS, SIZE, SIZE)) * 3).astype(np.float32)]
    inputs += [(RNG.standard_normal(inputs[0].shape) * 3).astype(np.float32) for _ in range(4)]
    batches, outputs = [], []
    for x in inputs:
        made.clear()
        (got,) = session.run(None, {"x": x})
        (want,) = reference.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        batches.append(len(made))
        outputs.append(got)
    engine = session.last.engine
    runners = [r for plan in engine.executable.plans.values() for r in plan.runners]
    assert batches[0] >= 4  # a batch for each of the block's compute sets
    assert batches[-1] == 0  # every one repeats its kept call
    assert all(r.repeat is not None for r in runners)
    (again,) = session.run(None, {"x": inputs[0]})
    assert np.array_equal(again, outputs[0])  # the first run's input: the same bits

    # memory replaced by other arrays (the same values): the views are found again
    memory = engine._memory
    for t in list(memory):
        memory[t] = memory[t].copy()
    made.clear()
    (got,) = session.run(None, {"x": inputs[1]})
    assert np.array_equal(got, outputs[1])
    assert len(made) >= 4
    assert all(r.repeat is None or r.repeat[0][0] is memory[r.types[0]] for r in runners)
