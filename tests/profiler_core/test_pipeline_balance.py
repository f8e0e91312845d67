"""Pipeline balance on the pipelined example (issue 41): each stage's cycles per
steady-state time step against the report's steps summed by hand, the stage that bounds
throughput, the bubble of ramp-up and ramp-down, and a layer moved between neighbouring
stages predicted by the what-if -- checked against the model built with the layer moved
and run for real."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import ipu_engine
from ipu_engine import nn
from profiler_core.insights import insights
from profiler_core.insights.pipeline_balance import pipeline_balance
from profiler_core.insights.whatif import what_if
from profiler_core.report import open_report
from tests.conftest import run_example_with_reports

TILES = "64"  # a small IPU: the same pipeline, quicker to compile four times over
MICRO_BATCHES = 12


@pytest.fixture(scope="module")
def pipelined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pipelined")
    run_example_with_reports(
        "pipelined_model.py", directory, "--steps", "1", "--tiles-per-ipu", TILES
    )
    return directory / "pipelined"


def _by_hand(report) -> tuple[np.ndarray, int, int]:
    """Each IPU's cycles over the steady state's steps, its time step's cycles and the
    ramps' idle stage-cycles, from the program tree and the run's steps alone."""
    programs, strings = report.programs, report.graph.strings
    names = [strings[int(n)] for n in programs.node_name]
    (steady,) = [n for n, name in enumerate(names) if name == "steadyState"]
    ramps = [n for n, name in enumerate(names) if name.startswith(("rampUp", "rampDown"))]

    def steps_under(nodes: list[int]) -> set[int]:
        under = set(nodes)
        for n in range(len(names)):  # parents come before their children
            if int(programs.node_parent[n]) in under:
                under.add(n)
        return {s for s in range(len(programs.step_node)) if int(programs.step_node[s]) in under}

    (run,) = report.execution.runs
    executed = np.bincount(run.step_ids, minlength=len(programs.step_node))
    repeats = int(programs.node_count[steady])
    per_ipu = np.zeros(programs.step_cycles.shape[1], dtype=np.int64)
    time_step = 0
    for step in steps_under([steady]):
        per_ipu += executed[step] * programs.step_cycles[step]
        time_step += executed[step] * int(programs.step_cycles[step].max())
    idle = 0
    for step in steps_under(ramps):
        cycles = programs.step_cycles[step]
        idle += int(executed[step] * (cycles.max() - cycles).sum())
    return per_ipu // repeats, time_step // repeats, idle


def test_the_balance_finding_is_the_stages_cycles_summed_by_hand(pipelined):
    report = open_report(pipelined)
    balance = pipeline_balance(report)
    per_ipu, time_step, idle = _by_hand(report)
    assert balance.stage_cycles.tolist() == per_ipu.tolist()
    assert balance.time_step_cycles == time_step
    # training's 8 virtual stages (4 forward, 4 backward): all busy in 12 - 7 time steps
    assert balance.steady_steps == MICRO_BATCHES - (2 * 4 - 1)
    assert balance.bound_stage == int(np.argmax(per_ipu))
    assert balance.ramp_idle_cycles == idle
    assert 0 < balance.bubble_fraction < 1
    (finding,) = [f for f in insights(report).findings if f.rule == "pipeline-balance"]
    assert f"IPU {balance.bound_stage} bounds throughput" in finding.title
    assert f"{int(per_ipu.max()):,} cycles per steady-state time step" in finding.title


def test_the_phases_of_operations_and_of_the_program_tree_give_one_balance(pipelined, tmp_path):
    """With debug.cbor the steps' phases are the ones Operations shows; without it, the
    program tree's phase nodes: the same steps either way."""
    bare = tmp_path / "pipelined"
    bare.mkdir()
    shutil.copy(pipelined / "profile.pop", bare / "profile.pop")
    with_debug, without = (
        pipeline_balance(open_report(pipelined)),
        pipeline_balance(open_report(bare)),
    )
    assert open_report(bare).debug_or_none() is None
    assert with_debug.to_dict() == without.to_dict()


def _moved_model() -> nn.Sequential:
    """The example's model with relu3 at the start of stage 2 (on IPU 2) instead of the
    end of stage 1: what the what-if's pipelineStage change of relu3 to 2 builds."""
    return nn.Sequential(
        nn.Linear(64, 256, seed=1),
        nn.ReLU(),
        nn.begin_block(nn.Linear(256, 256, seed=2), ipu_id=1),
        nn.begin_block(nn.ReLU(), ipu_id=2),
        nn.Linear(256, 256, seed=3),
        nn.ReLU(),
        nn.begin_block(nn.Linear(256, 10, seed=4), ipu_id=3),
    )


def test_moving_a_layer_to_the_next_stage_is_predicted_as_the_model_built_that_way_runs(
    pipelined, tmp_path
):
    found = what_if(open_report(pipelined)).to_dict()
    assert found["available"], found
    moves = [
        s
        for s in [*found["suggestions"], *found["dropped"]]
        if s["change"]["option"] == "pipelineStage"
    ]
    assert moves  # the bounding stage's boundary layers were tried on both sides
    (relu3,) = [m for m in moves if m["change"]["operation"] == "relu3"]
    assert relu3["change"]["value"] == 2
    assert relu3["samples_per_second"] > 0 and relu3["now_samples_per_second"] > 0
    # the model built with relu3 in stage 2, trained for real
    options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    opts = ipu_engine.Options(tiles_per_ipu=int(TILES), name="pipelined", engine_options=options)
    train = ipu_engine.training_model(
        _moved_model(), ipu_engine.SGD(lr=0.5), nn.CrossEntropyLoss(), opts,
        gradient_accumulation=MICRO_BATCHES,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    x = rng.standard_normal((MICRO_BATCHES * 8, 64)).astype(np.float32)
    train(x, np.zeros(MICRO_BATCHES * 8, dtype=np.int32))
    moved = open_report(tmp_path / "pipelined")
    (run,) = moved.execution.runs
    assert relu3["predicted"]["total_cycles"] == pytest.approx(run.total_cycles, rel=0.05)
    fit = insights(moved).fit
    assert relu3["predicted"]["fullest_bytes"] == pytest.approx(fit.fullest_bytes, rel=0.01)
    if os.environ.get("PRINT_FIGURES"):
        print(json.dumps({"predicted": relu3["predicted"], "ran": run.total_cycles}))
