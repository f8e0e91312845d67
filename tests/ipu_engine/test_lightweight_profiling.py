"""Issue 43, lightweight profiling in the engine: profiler.blocks.filter and
profiler.programs.filter (regular expressions over whole program names, as Poplar's) time
every execution of the Block programs and programs they choose, on one tile per IPU, with
every StreamCopy; expected cycles are hand counts of the tutorial's ~3600-cycle vertex."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from ipu_engine import (
    INT,
    Block,
    Engine,
    Graph,
    IPUModel,
    OptionError,
    ProgramError,
    Repeat,
    Sequence,
)
from profiler_core.model.kinds import BlockKind
from tests.lightweight_reports import example

WORK = 3600  # cycles of the tutorial's DummyVertex (its estimate, by hand)


def _ops(names, ipus=1, tiles=4):
    """A graph with one ~3600-cycle operation per name on tile 0; its device and programs."""
    device = IPUModel("ipu2", num_ipus=ipus, tiles_per_ipu=tiles).create_device()
    graph = Graph(device.target)
    ops = {name: example()._operation(graph, name, 0) for name in names}
    return device, graph, ops


def _run(graph, device, program, options, runs=1):
    engine = Engine(graph, program, options)
    engine.load(device)
    for _ in range(runs):
        engine.run(0)
    return engine


def _names(blocks) -> list[str]:
    names = blocks.strings.tolist()
    return [names[blocks.block_name[b]] for b in blocks.exec_block.tolist()]


def test_blocks_filter_times_the_block_programs_whose_whole_name_matches():
    device, graph, ops = _ops(["a", "b", "c", "d"])
    program = Sequence(
        Block(ops["a"], name="stage1"),
        Block(ops["b"], name="stage2"),
        Block(ops["c"], name="stage10"),  # "stage." matches the whole name only: not this
        Block(ops["d"], name="other"),
    )
    blocks = _run(graph, device, program, {"profiler.blocks.filter": "stage."}).profile().blocks
    assert _names(blocks) == ["stage1", "stage2"]
    assert set(blocks.block_kind[blocks.exec_block].tolist()) == {BlockKind.BLOCK}
    assert (blocks.exec_end - blocks.exec_start).tolist() == [WORK, WORK]


def test_programs_filter_times_programs_by_their_name_in_the_program_tree():
    device, graph, ops = _ops(["operation", "op2", "other"])
    program = Sequence(ops["operation"], ops["op2"], Sequence(ops["other"], name="wrapper"))
    options = {"profiler.programs.filter": "op.*|wrap+er"}
    blocks = _run(graph, device, program, options).profile().blocks
    # an Execute is named after its compute set, a Sequence by its name
    assert _names(blocks) == ["operation", "op2", "wrapper"]
    assert set(blocks.block_kind.tolist()) == {BlockKind.PROGRAM}
    assert (blocks.exec_end - blocks.exec_start).tolist() == [WORK, WORK, WORK]


def test_a_repeat_of_five_gives_five_executions_with_increasing_starts():
    device, graph, ops = _ops(["op"])
    program = Sequence(Repeat(5, Block(ops["op"], name="body")))
    blocks = _run(graph, device, program, {"profiler.blocks.filter": "body"}).profile().blocks
    starts, ends = blocks.exec_start, blocks.exec_end
    assert len(starts) == 5
    assert (np.diff(starts) > 0).all()
    assert (ends - starts).tolist() == [WORK] * 5
    assert (starts[1:] >= ends[:-1]).all()  # one after the other, never overlapping


def test_every_kept_run_is_recorded_on_one_cycle_counter():
    device, graph, ops = _ops(["op"])
    program = Sequence(Repeat(2, Block(ops["op"], name="body")))
    options = {"profiler.blocks.filter": "body", "autoReport.executionProfileProgramRunCount": 3}
    engine = _run(graph, device, program, options, runs=4)
    blocks = engine.profile().blocks
    assert blocks.exec_run.tolist() == [0, 0, 1, 1, 2, 2]  # the three kept runs
    totals = [r.total_cycles for r in engine.runs[0]]
    assert blocks.run_start.tolist() == [0, totals[0], totals[0] + totals[1]]
    assert blocks.run_cycles.tolist() == totals
    for run in range(3):  # each run's executions lie inside it
        mine = blocks.exec_run == run
        assert blocks.exec_start[mine].min() >= blocks.run_start[run]
        assert blocks.exec_end[mine].max() <= blocks.run_start[run] + totals[run]


def test_the_pipeline_times_each_stage_on_its_own_ipu_and_nested_blocks_inside():
    engine = example().run_example("pipeline")
    blocks = engine.profile().blocks
    names = _names(blocks)
    tiles_per_ipu = example().TILES_PER_IPU
    for stage, ipu in (("stage1", 0), ("stage2", 1)):
        rows = [i for i, n in enumerate(names) if n == stage]
        assert len(rows) == 5
        assert set(blocks.exec_ipu[rows].tolist()) == {ipu}  # never on the other IPU
        assert set(blocks.exec_tile[rows].tolist()) == {ipu * tiles_per_ipu}
        assert set((blocks.exec_end - blocks.exec_start)[rows].tolist()) == {2 * WORK}
        assert set(blocks.exec_depth[rows].tolist()) == {0}
    inner = [i for i, n in enumerate(names) if n == "op2"]
    assert len(inner) == 10 and set(blocks.exec_depth[inner].tolist()) == {1}
    for row in inner:  # each op2 lies inside a stage on its IPU
        outer = [
            i
            for i, n in enumerate(names)
            if n.startswith("stage")
            and blocks.exec_ipu[i] == blocks.exec_ipu[row]
            and blocks.exec_start[i] <= blocks.exec_start[row]
            and blocks.exec_end[row] <= blocks.exec_end[i]
        ]
        assert len(outer) == 1


def test_executions_of_data_dependent_work_each_keep_their_own_cycles():
    """The detailed trace keeps one figure per compute set; lightweight profiling every
    execution: the growing example's loop runs one more ~3600-cycle step each time."""
    blocks = example().run_example("growing").profile().blocks
    cycles = (blocks.exec_end - blocks.exec_start).tolist()
    assert len(cycles) == 5
    steps = np.diff(cycles)
    assert (steps > WORK).all() and len(set(steps.tolist())) == 1  # one more pass each time


def test_every_stream_copy_is_timed_on_the_tile_its_data_lands_on():
    engine = example().run_example("streamed")
    blocks = engine.profile().blocks
    kinds = blocks.block_kind[blocks.exec_block]
    copies = np.flatnonzero(kinds >= BlockKind.STREAM_COPY_BEGIN)
    assert len(copies) == 15  # five Copy(stream, in1), each Begin, Mid and End
    assert set(blocks.exec_tile[copies].tolist()) == {example().TILES_PER_IPU - 1}
    phases = kinds[copies].reshape(5, 3)
    assert (phases == [BlockKind.STREAM_COPY_BEGIN, BlockKind.STREAM_COPY_MID,
                       BlockKind.STREAM_COPY_END]).all()  # fmt: skip
    starts, ends = blocks.exec_start[copies], blocks.exec_end[copies]
    assert (starts[1:] >= ends[:-1]).all()
    assert np.count_nonzero(kinds == BlockKind.PROGRAM) == 5


def test_a_filter_that_matches_nothing_is_said(caplog):
    caplog.set_level(logging.WARNING, logger="poplar")
    device, graph, ops = _ops(["op"])
    program = Sequence(Block(ops["op"], name="stage1"), name="main")
    options = {"profiler.blocks.filter": "nothing.*", "profiler.programs.filter": "nope"}
    blocks = _run(graph, device, program, options).profile().blocks
    assert blocks.num_executions == 0
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "profiler.blocks.filter='nothing.*' matches no Block program's whole name" in said
    assert "the Block programs are 'stage1'" in said
    assert "profiler.programs.filter='nope' matches no program's whole name" in said
    assert "'main'" in said  # names it was tried on, as the Program Tree shows them


def test_a_blocks_filter_without_block_programs_says_there_are_none(caplog):
    caplog.set_level(logging.WARNING, logger="poplar")
    device, graph, ops = _ops(["op"])
    _run(graph, device, Sequence(ops["op"]), {"profiler.blocks.filter": "stage.*"})
    assert "there is no Block program" in caplog.text


@pytest.mark.parametrize("key", ["profiler.blocks.filter", "profiler.programs.filter"])
def test_a_regular_expression_that_does_not_compile_is_an_error_naming_the_option(key, monkeypatch):
    device, graph, ops = _ops(["op"])
    with pytest.raises(OptionError, match=f"engine option '{key}': 'stage\\(' is not a regular"):
        Engine(graph, Sequence(ops["op"]), {key: "stage("})
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps({key: "[op"}))
    with pytest.raises(OptionError, match=key.replace(".", r"\.")):
        Engine(graph, Sequence(ops["op"]))


def test_blocks_tile_is_recorded_and_a_tile_off_the_ipu_is_an_error():
    device, graph, ops = _ops(["op"], tiles=4)
    program = Sequence(Block(ops["op"], name="b"))
    options = {"profiler.blocks.filter": "b", "profiler.blocks.tile": 3}
    blocks = _run(graph, device, program, options).profile().blocks
    assert blocks.tile == 3 and blocks.exec_tile.tolist() == [3]
    with pytest.raises(OptionError, match="'profiler.blocks.tile': tile 4 is not on the IPU"):
        Engine(graph, program, {**options, "profiler.blocks.tile": 4})


def test_blocks_change_no_step_no_cycle_and_unmatched_blocks_are_their_body():
    device, graph, ops = _ops(["a", "b"])
    plain = Sequence(Repeat(3, Sequence(ops["a"], ops["b"])))
    scoped = Sequence(Repeat(3, Block(Sequence(ops["a"], Block(ops["b"], name="in")), name="x")))
    off = _run(graph, device, plain, {})
    unmatched = _run(graph, device, scoped, {})
    on = _run(graph, device, scoped, {"profiler.blocks.filter": "x|in"})
    assert off.profile().blocks is None and unmatched.profile().blocks is None
    for engine in (unmatched, on):
        assert np.array_equal(engine.last_run_steps, off.last_run_steps)
        assert engine.last_run.total_cycles == off.last_run.total_cycles
    assert on.profile().blocks.num_executions == 6


def test_nested_programs_of_one_name_pair_their_starts_and_ends_as_brackets():
    device, graph, ops = _ops(["op"])
    program = Sequence(Repeat(2, Block(Block(ops["op"], name="x"), name="x")))
    blocks = _run(graph, device, program, {"profiler.blocks.filter": "x"}).profile().blocks
    assert blocks.exec_depth.tolist() == [0, 1, 0, 1]
    spans = list(zip(blocks.exec_start.tolist(), blocks.exec_end.tolist(), strict=True))
    for outer, inner in (spans[0:2], spans[2:4]):
        assert outer[0] <= inner[0] and inner[1] <= outer[1]


def test_a_block_inside_a_function_is_timed_at_each_call():
    device, graph, ops = _ops(["op"])
    function = graph.add_function(Block(ops["op"], name="f"))
    from ipu_engine import Call

    program = Sequence(Call(function), Repeat(2, Call(function)))
    blocks = _run(graph, device, program, {"profiler.blocks.filter": "f"}).profile().blocks
    assert (blocks.exec_end - blocks.exec_start).tolist() == [WORK] * 3


def test_a_block_needs_a_program():
    with pytest.raises(ProgramError, match="Block body must be a program"):
        Block(None, name="b")
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=2).create_device().target)
    assert graph.add_variable(INT, [], "x") is not None


def test_runs_that_take_other_paths_and_interleaved_programs_are_each_timed():
    """Runs of one path share their timing; a run down another path (a loop that runs once
    more each run) is timed on its own, and runs of two programs are listed by program."""
    from ipu_engine import BOOL, Copy, Execute, RepeatWhileTrue

    module = example()
    device, graph, ops = _ops(["other"])
    count, limit, more = (graph.add_variable(t, [], n) for t, n in
                          ((INT, "count"), (INT, "limit"), (BOOL, "more")))  # fmt: skip
    for tensor in (count, limit, more):
        graph.set_tile_mapping(tensor, 0)
    check, work, bump = (graph.add_compute_set(n) for n in ("check", "work", "bump"))
    graph.set_tile_mapping(graph.add_vertex(check, module.Below, value=count, limit=limit,
                                            result=more), 0)  # fmt: skip
    graph.set_tile_mapping(graph.add_vertex(work, module.DummyVertex, counter=count), 0)
    graph.set_tile_mapping(graph.add_vertex(bump, module.DummyVertex, counter=limit), 0)
    zero = graph.add_constant(INT, [], 0, "zero")
    graph.set_tile_mapping(zero, 0)
    loop = Block(RepeatWhileTrue(Execute(check), more, Execute(work)), name="loop")
    growing = Sequence(Copy(zero, count), Execute(bump), loop, name="growing")
    steady = Sequence(Block(ops["other"], name="steady"), name="steady")
    options = {"profiler.blocks.filter": "loop|steady",
               "autoReport.executionProfileProgramRunCount": 10}  # fmt: skip
    engine = Engine(graph, [growing, steady], options)
    engine.load(device)
    plain = Engine(graph, [growing, steady], {})  # the same runs without the marks
    plain.load(device)
    for index in (0, 1, 0, 1, 0):  # the loop runs 1, 2, 3 passes in runs 0, 2, 4
        engine.run(index)
        plain.run(index)  # each run's own steps, never the last run's of its program
        assert np.array_equal(engine.last_run_steps, plain.last_run_steps)
        assert engine.last_run.total_cycles == plain.last_run.total_cycles
    blocks = engine.profile().blocks
    assert blocks.run_program.tolist() == [0, 0, 0, 1, 1]  # by program, as the runs are
    starts = blocks.run_start.tolist()
    assert starts[:3] == sorted(starts[:3]) and starts[3:] == sorted(starts[3:])
    names = _names(blocks)
    loops = [i for i, n in enumerate(names) if n == "loop"]
    assert blocks.exec_run[loops].tolist() == [0, 1, 2]
    cycles = (blocks.exec_end - blocks.exec_start)[loops]
    assert np.diff(cycles).tolist() == [cycles[1] - cycles[0]] * 2 and cycles[1] > cycles[0]
    steady_rows = [i for i, n in enumerate(names) if n == "steady"]
    assert blocks.exec_run[steady_rows].tolist() == [3, 4]
    assert (blocks.exec_end - blocks.exec_start)[steady_rows].tolist() == [WORK, WORK]
    for run in range(5):  # each run's executions lie inside it
        mine = blocks.exec_run == run
        assert blocks.exec_start[mine].min() >= blocks.run_start[run]
        assert blocks.exec_end[mine].max() <= blocks.run_start[run] + blocks.run_cycles[run]
