"""The bundled framework-level examples run, print their results and show what they claim."""

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np

import ipu_engine as ie
from ipu_engine.poplar.compiler.steps import StepKind
from ipu_engine.poplar.cost_model.compile_model import build_compile_model
from profiler_core import pva
from tests.ipu_engine.conftest import steps_under

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
FRAMEWORK_EXAMPLES = [
    "basic_add.py",
    "four_shards.py",
    "mlp_training.py",
    "pipelined_model.py",
    "replicated_model.py",
]


def example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name), run_name="example")


def test_every_example_has_a_one_line_description_and_a_main():
    for name in FRAMEWORK_EXAMPLES:
        namespace = example(name)
        first_line = namespace["__doc__"].splitlines()[0]
        assert first_line.endswith(".") and len(first_line) <= 100, name
        assert callable(namespace["main"]), name


def test_basic_add_prints_three_and_eight(capsys):
    result = example("basic_add.py")["main"]([])
    assert result.tolist() == [3.0, 8.0]
    assert capsys.readouterr().out == "(a + b) + (a + c) = [3.0, 8.0]\n"


def test_four_shards_gives_four_and_fourteen_with_work_and_exchange_on_four_ipus(capsys):
    namespace = example("four_shards.py")
    assert namespace["main"]([]).tolist() == [4.0, 14.0]
    assert "[4.0, 14.0]" in capsys.readouterr().out
    fn = ie.function(namespace["four_shards"], num_ipus=4, name="four_shards")
    a, b, c = (np.array(v, dtype=np.float32) for v in ([1, 1], [0, 1], [1, 5]))
    assert fn(a, b, c).tolist() == [4.0, 14.0]
    graph, exe = fn.last.graph, fn.last.engine.executable
    assert exe.programs[0].name == "four_shards"
    per_ipu = graph.target.tiles_per_ipu
    assert {int(t) // per_ipu for b in graph.vertex_blocks for t in b.tiles} == {0, 1, 2, 3}
    build_compile_model(graph, exe, False)
    exchanges = [s for s in exe.steps if s.kind is StepKind.GLOBAL_EXCHANGE]
    assert len(exchanges) == 4 and all(s.facts["traffic"].total_bytes > 0 for s in exchanges)


def test_mlp_training_lowers_the_loss_and_traces_each_epoch(tmp_path: Path):
    options = json.dumps({"enable": "true", "directory": str(tmp_path)})
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "mlp_training.py"), "--epochs", "3", "--samples", "512"],
        env={**os.environ, "PVTI_OPTIONS": options},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    losses = [float(line.split()[-1]) for line in result.stdout.splitlines() if "mean loss" in line]
    assert len(losses) == 3 and losses[2] < losses[1] < losses[0]
    (path,) = tmp_path.glob("*.pvti")
    trace = pva.openTrace(path)
    # the host thread's epochs (the engine may add tracks of its own, one per IPU)
    epochs = [
        e.label
        for thread in trace.processes[0].threads
        for e in thread.rootEvents
        if e.label.startswith("Epoch")
    ]
    assert epochs == ["Epoch:0", "Epoch:1", "Epoch:2"]
    (series,) = trace.series
    assert series.name == "Training Loss"
    assert len(series.values) == 3 * 512 // 32  # one loss per training step
    assert series.values[-4:].mean() < series.values[:4].mean()


def busy_ipus(exe, cycles, phase: str) -> np.ndarray:
    """For each compute step of the phase, how many IPUs it has cycles on."""
    steps = [s for s in steps_under(exe, phase) if s.kind is StepKind.ON_TILE_EXECUTE]
    return (cycles[[s.id for s in steps if s.compute_set >= 0]] > 0).sum(axis=1)


def test_pipelined_model_trains_with_its_four_stages_overlapping(capsys):
    args = ["--micro-batches", "8", "--steps", "2", "--tiles-per-ipu", "64"]
    train = example("pipelined_model.py")["main"](args)
    out = capsys.readouterr().out
    losses = [float(line.split()[3]) for line in out.splitlines() if line.startswith("update")]
    assert len(losses) == 2 and losses[1] < losses[0]
    assert "steadyState  fwd0 fwd1 fwd2 fwd3 bwd3 bwd2 bwd1 bwd0\n" in out
    exe = train.engine.executable
    assert exe.programs[0].name == "pipelined"
    cycles = build_compile_model(train.graph, exe, False).step_cycles
    assert cycles.shape[1] == 4
    steady = busy_ipus(exe, cycles, "steadyState")
    assert (steady >= 2).any() and steady.max() == 4  # the stages overlap across IPUs
    for ramp, most in (("rampUp0", 1), ("rampUp1", 2), ("rampUp2", 3)):
        assert busy_ipus(exe, cycles, ramp).max() == most < steady.max()


def test_pipelined_model_inference_overlaps_in_its_steady_state(capsys):
    args = ["--inference", "--micro-batches", "8", "--tiles-per-ipu", "64"]
    infer = example("pipelined_model.py")["main"](args)
    out = capsys.readouterr().out
    assert float(out.splitlines()[0].split()[-1]) < 1e-5  # max error vs numpy
    assert "steadyState  fwd0 fwd1 fwd2 fwd3 x5" in out
    exe = infer.last.engine.executable
    cycles = build_compile_model(infer.last.graph, exe, False).step_cycles
    assert busy_ipus(exe, cycles, "steadyState").max() == 4
    assert busy_ipus(exe, cycles, "rampUp0").max() == 1


def test_replicated_model_keeps_its_replicas_identical(capsys):
    train = example("replicated_model.py")["main"](["--replicas", "4", "--steps", "2"])
    out = capsys.readouterr().out
    assert "the 4 replicas hold identical weights: True" in out
    assert train.graph.target.num_ipus == 4
    assert train.engine.executable.programs[0].name == "replicated"
