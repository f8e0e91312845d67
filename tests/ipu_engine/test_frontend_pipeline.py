"""Pipelines: stages on their own IPUs overlap over micro-batches -- ramp-up, a steady state
where one compute set holds every stage's vertices, ramp-down -- and compute what numpy does."""

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import GraphError, ops
from ipu_engine.frontend.pipeline import schedule
from ipu_engine.poplar.compiler.steps import StepKind
from ipu_engine.poplar.cost_model.compile_model import build_compile_model
from tests.ipu_engine.conftest import steps_under

RNG = np.random.default_rng(3)
WEIGHTS = [RNG.standard_normal((12, 12)).astype(np.float32) * 0.4 for _ in range(4)]
TILES = {"tiles_per_ipu": 32}


def stage_fns():
    return [lambda x, w=w: ops.relu(x @ w) for w in WEIGHTS[:3]] + [
        lambda x: ops.softmax(x @ WEIGHTS[3])
    ]


def numpy_model(x):
    for w in WEIGHTS[:3]:
        x = np.maximum(x @ w, 0)
    z = x @ WEIGHTS[3]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_schedule_ramps_up_holds_a_steady_state_and_ramps_down():
    runs = schedule(num_stages=4, micro_batches=6)
    assert [(r.label, r.stages, r.count) for r in runs] == [
        ("rampUp0", (0,), 1),
        ("rampUp1", (0, 1), 1),
        ("rampUp2", (0, 1, 2), 1),
        ("steadyState", (0, 1, 2, 3), 3),
        ("rampDown0", (1, 2, 3), 1),
        ("rampDown1", (2, 3), 1),
        ("rampDown2", (3,), 1),
    ]
    assert sum(len(r.stages) * r.count for r in runs) == 4 * 6  # every stage, every batch


def test_a_four_stage_pipeline_matches_numpy_and_overlaps_its_stages():
    fn = ie.pipeline(stage_fns(), device_iterations=8, **TILES)
    x = RNG.standard_normal((8 * 5, 12)).astype(np.float32)
    np.testing.assert_allclose(fn(x), numpy_model(x), rtol=1e-4, atol=1e-6)

    program = fn.last
    exe = program.engine.executable
    cycles = build_compile_model(program.graph, exe, False).step_cycles
    phases = [p.name for p in exe.programs[0].children()]
    assert phases == [
        "rampUp0",
        "rampUp1",
        "rampUp2",
        "steadyState",
        "rampDown0",
        "rampDown1",
        "rampDown2",
    ]
    assert exe.programs[0].children()[3].count == 5

    def active_ipus(phase: str) -> list[int]:
        """For each compute step of the phase, how many IPUs have compute cycles."""
        return [
            int((cycles[s.id] > 0).sum())
            for s in steps_under(exe, phase)
            if s.kind is StepKind.ON_TILE_EXECUTE and s.compute_set >= 0
        ]

    steady = active_ipus("steadyState")
    assert max(steady) == 4  # one step computes on all four IPUs at once
    assert max(active_ipus("rampUp0")) == 1
    assert max(active_ipus("rampUp1")) == 2
    assert max(active_ipus("rampUp2")) == 3 < max(steady)
    assert max(active_ipus("rampDown2")) == 1


def test_pipeline_stage_blocks_carry_values_to_later_stages_and_replicate():
    def model(x, bias):
        with ie.pipeline_stage(0):
            h = x * 2.0
        with ie.pipeline_stage(1):
            g = ops.tanh(h)
        with ie.pipeline_stage(2):
            return g + h + bias  # h and bias skip stages: carried through stage 1

    fn = ie.function(model, device_iterations=3, replication_factor=2, **TILES)
    x = RNG.standard_normal((12, 5)).astype(np.float32)
    bias = RNG.standard_normal((12, 5)).astype(np.float32)
    np.testing.assert_allclose(fn(x, bias), np.tanh(2 * x) + 2 * x + bias, rtol=1e-5)
    assert fn.last.graph.target.num_ipus == 6  # 2 replicas x 3 stages


def test_a_stage_using_a_later_stages_value_is_refused():
    def backwards(x):
        with ie.pipeline_stage(1):
            h = x * 2.0
        with ie.pipeline_stage(0):
            return h + 1.0

    with pytest.raises(GraphError, match="stage 0 uses float.* later stage 1"):
        ie.function(backwards, device_iterations=2, **TILES)(np.ones((4, 2)))


def test_fewer_micro_batches_than_stages_still_flow_through():
    fn = ie.pipeline(stage_fns(), device_iterations=2, **TILES)
    x = RNG.standard_normal((2 * 3, 12)).astype(np.float32)
    np.testing.assert_allclose(fn(x), numpy_model(x), rtol=1e-4, atol=1e-6)
