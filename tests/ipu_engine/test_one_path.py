"""Issue 43, lightweight profiling's cost: a program with one path (no RepeatWhile or If)
runs without logging its marks, and its marked log is worked out before it runs
(compiler/one_path.py). The executions recorded that way must equal, column for column, the
ones recorded from the marks each run logs (the shortcut turned off)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ipu_engine import Block, Call, Engine, Graph, IPUModel, Repeat, Sequence
from ipu_engine.poplar.report.blocks import BlockRecorder
from tests.lightweight_reports import example

RUNS = 40  # more than the recorder's first columns hold: they grow while runs are kept
KEEP = "autoReport.executionProfileProgramRunCount"


def _called_and_repeated(device):
    """Blocks inside a function called from a Repeat and from the top, nested blocks, and a
    program-filter match on a compute set: every node kind a one-path log walks."""
    graph = Graph(device.target)
    module = example()
    a, b, c = (module._operation(graph, name, 0) for name in ("a", "b", "c"))
    function = graph.add_function(Block(Sequence(a, Block(b, name="inner")), name="f"))
    program = Sequence(Call(function), Repeat(3, Sequence(Call(function), c)), name="main")
    return graph, program, {"profiler.blocks.filter": "f|inner", "profiler.programs.filter": "c"}


CASES = {**example().EXAMPLES, "called and repeated": _called_and_repeated}


def _engine(name: str) -> Engine:
    device = IPUModel("ipu2", num_ipus=2 if name == "pipeline" else 1, tiles_per_ipu=8)
    device = device.create_device()
    graph, program, options = CASES[name](device)
    engine = Engine(graph, program, {**options, KEEP: RUNS})
    engine.load(device)
    if name == "streamed":
        engine.connect_stream("in", np.arange(64, dtype=np.int32))
    for _ in range(RUNS):
        engine.run(0)
    return engine


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_path_executions_equal_those_of_the_marks_logged_at_run_time(name, monkeypatch):
    shortcut = _engine(name)
    one_path = shortcut.blocks.fixed_log(0) is not None
    assert one_path == (name != "growing")  # growing's RepeatWhile depends on the data
    monkeypatch.setattr(BlockRecorder, "fixed_log", lambda self, program: None)
    logged = _engine(name)
    ours, theirs = shortcut.profile().blocks, logged.profile().blocks
    assert ours.num_executions == theirs.num_executions > RUNS
    assert len(ours.run_start) == RUNS
    for field in dataclasses.fields(ours):
        mine, other = getattr(ours, field.name), getattr(theirs, field.name)
        if isinstance(mine, np.ndarray):
            assert mine.dtype == other.dtype and np.array_equal(mine, other), field.name
    assert ours.strings.tolist() == theirs.strings.tolist()
    assert np.array_equal(shortcut.last_run_steps, logged.last_run_steps)
    assert shortcut.last_run.total_cycles == logged.last_run.total_cycles


def test_a_one_path_program_runs_without_its_marks_and_logs_them_from_the_walk():
    engine = _engine("called and repeated")
    fixed = np.frombuffer(engine.blocks.fixed_log(0), dtype=np.int32)
    marks = fixed[fixed < 0]
    # f is called 4 times with inner inside, c runs 3 times: 11 blocks, a start and an end each
    assert len(marks) == 2 * (4 + 4 + 3)
    assert np.array_equal(fixed[fixed >= 0], engine.last_run_steps)
    assert engine.blocks.fixed_log(0) is engine.blocks.fixed_log(0)  # worked out once
