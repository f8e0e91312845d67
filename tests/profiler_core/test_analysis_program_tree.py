"""Program tree: the shape arrays a tree view needs, each node's steps, cycles and executions,
checked against the factory's tree (main, its repeat, host writes) and tutorial 4."""

from __future__ import annotations

import pytest

from profiler_core.analysis.program_tree import program_tree
from profiler_core.errors import ReportError
from profiler_core.model.kinds import ProgramKind
from profiler_core.report import open_report
from tests.profiler_core.factories import HOST_PROGRAM_STEPS, REPEAT_COUNT, make_profile

# The factory's tree for 10 steps: node 0 "main" with leaves for steps 2-5, node 5 the
# repeat with leaves for steps 6-9, node 10 "host writes" with leaves for steps 0-1.
MAIN, REPEAT, HOST = 0, 5, 10


def test_tree_shape_arrays_describe_the_factory_tree(report):
    tree = program_tree(report[0])
    assert tree.parent.tolist() == [-1, 0, 0, 0, 0, 0, 5, 5, 5, 5, -1, 10, 10]
    assert tree.depth.tolist() == [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 0, 1, 1]
    assert tree.first_child[[MAIN, REPEAT, HOST, 1]].tolist() == [1, 6, 11, -1]
    assert tree.next_sibling.tolist() == [-1, 2, 3, 4, 5, -1, 7, 8, 9, -1, -1, 12, -1]
    assert tree.children_of(MAIN).tolist() == [1, 2, 3, 4, 5]
    assert tree.children_of(REPEAT).tolist() == [6, 7, 8, 9]
    assert tree.children_of(3).tolist() == []
    assert tree.roots.tolist() == [MAIN, HOST]


def test_each_node_owns_the_steps_that_point_to_it(report):
    profile = report[0]
    tree = program_tree(profile)
    for node in range(len(tree)):
        expected = [s for s, n in enumerate(profile.programs.step_node.tolist()) if n == node]
        assert tree.steps_of(node).tolist() == expected
    assert tree.steps_of(11).tolist() == [0]


def test_cycles_and_executions_over_both_runs(report):
    profile = report[0]
    tree = program_tree(profile)
    duration = profile.programs.step_cycles.max(axis=1)
    body = range(6, 10)
    # main runs once (in run 1), its body REPEAT_COUNT times; host writes once (in run 0)
    assert tree.executions[[MAIN, REPEAT, HOST]].tolist() == [1, 1, 1]
    assert tree.executions[6:10].tolist() == [REPEAT_COUNT] * 4
    assert tree.cycles[REPEAT] == REPEAT_COUNT * sum(int(duration[s]) for s in body)
    assert tree.cycles[MAIN] == sum(int(duration[s]) for s in range(2, 6)) + tree.cycles[REPEAT]
    assert tree.cycles[HOST] == sum(int(duration[s]) for s in range(HOST_PROGRAM_STEPS))
    assert tree.cycles[MAIN] + tree.cycles[HOST] == sum(
        r.total_cycles for r in profile.execution.runs
    )
    assert tree.self_cycles[MAIN] == 0
    assert tree.step_executions.tolist() == [1, 1, 1, 1, 1, 1] + [REPEAT_COUNT] * 4


def test_cycles_of_one_run_and_of_a_program_never_run():
    profile = make_profile(3, num_runs=4)
    only_host = program_tree(profile, run=0)
    assert only_host.cycles[MAIN] == 0 and only_host.executions[MAIN] == 0
    both = program_tree(profile)  # runs alternate host writes and main: twice each
    assert both.executions[[MAIN, REPEAT, HOST]].tolist() == [2, 2, 2]
    never = program_tree(make_profile(3, executed=False))
    assert never.cycles.sum() == 0 and never.executions.sum() == 0
    with pytest.raises(ReportError, match=r"there is no run 4; the report has 4 run\(s\), 0 to 3"):
        program_tree(profile, run=4)


def test_tutorial4_tree_is_its_sequence_of_four_executes(tutorial4_report):
    report = open_report(tutorial4_report)
    tree = program_tree(report)
    names = report.graph.strings.take(tree.name)
    assert names == [
        "tutorial4",
        "m4/Conv_1/Convolve",
        "m4/Reduce",
        "m5/Conv_1/Convolve",
        "m5/Reduce",
    ]
    assert tree.kind.tolist() == [ProgramKind.SEQUENCE] + [ProgramKind.EXECUTE] * 4
    assert [len(tree.steps_of(n)) for n in range(5)] == [0, 3, 3, 3, 3]  # Sync, exchange, run
    assert tree.cycles[0] == report.execution.runs[0].total_cycles
    assert tree.cycles[1:].sum() == tree.cycles[0]
    assert tree.executions.tolist() == [1] * 5


def test_a_step_naming_a_missing_string_is_a_report_error(report):
    profile = report[0]
    profile.programs.step_name[3] = 10_000
    with pytest.raises(ReportError, match="'step_name' refers to string 10000"):
        program_tree(profile)
