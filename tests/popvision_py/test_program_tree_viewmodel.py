"""The Program Tree's view models without a window: lines in program order from the CSR
arrays, a 10,000-level chain and a 1.3M-line tree, search order, capped expansion, details."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.synthetic_programs import deep_program, wide_program
from popvision_py.viewmodels.program_details import NOT_RECORDED, line_details
from popvision_py.viewmodels.program_lines import ProgramLines
from popvision_py.viewmodels.program_tree import NOT_RUN, ProgramTreeViewModel
from popvision_py.viewmodels.step_colors import step_kind_color
from profiler_core.analysis.program_tree import program_tree
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report


def preorder(lines: ProgramLines, section: int) -> list[int]:
    """Every line of a section in display order, by an explicit stack (the reference)."""
    order, stack = [], lines.sections[section][::-1].tolist()
    while stack:
        line = stack.pop()
        order.append(line)
        stack.extend(
            lines.children[lines.child_offsets[line] : lines.child_offsets[line + 1]][::-1].tolist()
        )
    return order


def test_a_ten_thousand_level_chain_is_shown_without_recursion():
    levels = 10_001
    tree, kinds, names, strings = deep_program(levels)
    lines = ProgramLines(tree, names, strings)
    assert len(lines) == levels + 1 + levels + 3
    deepest_step = lines.line_of_step(levels + 2)  # the innermost OnTileExecute
    path = lines.ancestors(deepest_step)
    assert path[0] == 0 and len(path) == levels + 1
    # each Repeat shows its Repeat step first, then the nested Repeat
    assert lines.child_count(0) == 2
    assert lines.child(0, 0) == lines.line_of_step(0) and lines.child(0, 1) == 1
    assert lines.row[1] == 1 and lines.row[lines.line_of_step(0)] == 0
    assert [lines.name_of(lines.child(levels, r)) for r in range(3)] == [
        "Sync", "DoExchange", "deepest/Convolve",
    ]  # fmt: skip
    assert lines.search("DEEPEST", 0).tolist() == [levels, deepest_step]
    assert np.array_equal(lines.subtree_steps(0), np.arange(levels + 3))
    assert np.array_equal(lines.subtree_steps(levels), levels + np.arange(3))
    plan, shown, complete = lines.expand_plan(0, 1000)
    assert not complete and shown <= 1000 and plan == list(range(len(plan)))


def test_a_million_line_tree_has_rows_parents_and_program_order_from_arrays():
    tree, kinds, names, strings = wide_program(4000, 83)
    lines = ProgramLines(tree, names, strings)
    assert len(lines) > 1_300_000
    assert lines.child_count(0) == 4000
    repeat = int(lines.child(0, 7))
    assert lines.name_of(repeat) == "loop" and lines.row[repeat] == 7
    first = lines.child(repeat, 0)
    assert lines.is_step(first) and kinds[lines.step_of(first)] == StepKind.REPEAT
    execute = lines.child(repeat, 1)
    assert [kinds[lines.step_of(lines.child(execute, r))] for r in range(3)] == [
        StepKind.SYNC, StepKind.DO_EXCHANGE, StepKind.ON_TILE_EXECUTE,
    ]  # fmt: skip
    # every line's parent has it at its row
    sample = np.random.default_rng(1).integers(1, len(lines), 2000)
    for line in sample.tolist():
        up = int(lines.parent[line])
        assert lines.child(up, int(lines.row[line])) == line
    # search returns matches in the order of the displayed tree
    matches = lines.search("op12", 0)
    names_of = {i: lines.name_of(i) for i in matches.tolist()}
    assert all("op12" in name for name in names_of.values())
    expected_count = sum(("op12" in f"layer{i % 97}/op{i}/convolve") for i in range(4000 * 83))
    assert matches.size == 2 * expected_count  # the Execute node and its OnTileExecute step
    position = {line: i for i, line in enumerate(preorder(lines, 0))}
    assert [position[m] for m in matches.tolist()] == sorted(position[m] for m in matches.tolist())
    plan, shown, complete = lines.expand_plan(0, 5000)
    assert not complete and 4000 < shown <= 5000 and plan[0] == 0


def test_lines_show_cycles_colours_and_search_steps_in_program_order(tutorial4_report):
    report = open_report(tutorial4_report)
    tree = program_tree(report)
    programs = report.programs
    model = ProgramTreeViewModel(tree, programs.step_kind, programs.step_name, report.strings)
    lines = model.lines
    assert lines.sections[0].tolist() == [0] and lines.sections[1].size == 0
    cycles = programs.step_cycles.max(axis=1)
    assert model.total_cycles == int(cycles.sum())
    assert model.text(0, 3) == f"{int(cycles.sum()):,}" and model.text(0, 4) == "100.0%"
    for step in range(programs.num_steps):
        line = lines.line_of_step(step)
        assert model.value(line, 3) == int(cycles[step])
        assert model.color(line) == step_kind_color(programs.step_kind[step])
    # node 3 (m5/Conv_1/Convolve) exchanges longer than it computes: coloured as exchange
    own = np.flatnonzero(programs.step_node == 3)
    dominant = own[np.argmax(cycles[own])]
    assert model.color(3) == step_kind_color(programs.step_kind[dominant])
    assert model.search("sync") == 4
    visited = [model.next_match() for _ in range(5)]
    sync_steps = np.flatnonzero(programs.step_kind == StepKind.SYNC)
    assert visited == [lines.line_of_step(s) for s in [*sync_steps.tolist(), sync_steps[0]]]
    assert model.next_match(backwards=True) == lines.line_of_step(int(sync_steps[-1]))
    assert model.match_text() == "4 of 4"


def test_details_of_a_step_come_from_the_graph_and_exchange_columns(tutorial4_report):
    report = open_report(tutorial4_report)
    programs, graph = report.programs, report.graph
    model = ProgramTreeViewModel(
        program_tree(report), programs.step_kind, programs.step_name, report.strings
    )
    compute = int(np.flatnonzero(programs.step_kind == StepKind.ON_TILE_EXECUTE)[0])
    details = line_details(model, model.lines.line_of_step(compute), graph, programs, report.debug)
    rows = dict(details.rows)
    cs = int(programs.step_cs[compute])
    assert rows["Compute set"] == report.strings[int(graph.cs_name[cs])]
    in_cs = graph.vc_cs == cs
    assert rows["Vertices"] == f"{int(graph.vc_count[in_cs].sum()):,}"
    assert rows["Tiles used"] == f"{len(set(graph.vc_tile[in_cs].tolist())):,}"
    assert rows["Variables read / written"] == NOT_RECORDED
    types = sorted(set(graph.vc_type[in_cs].tolist()))
    assert len(details.vertices) == len(types)
    first = types[0]
    expected = int(graph.vc_count[in_cs & (graph.vc_type == first)].sum())
    assert int(details.vertices.columns[1].values[0]) == expected
    assert details.debug_context == int(programs.step_debug[compute])
    exchange = int(np.flatnonzero(programs.step_kind == StepKind.DO_EXCHANGE)[0])
    rows = dict(line_details(model, model.lines.line_of_step(exchange), graph, programs, None).rows)
    mine = programs.exch_step == exchange
    assert rows["Exchange bytes in"] == f"{int(programs.exch_bytes_in[mine].sum()):,}"
    assert rows["Exchange bytes out"] == f"{int(programs.exch_bytes_out[mine].sum()):,}"


@pytest.mark.parametrize("column", [2, 3, 4])
def test_a_report_that_never_ran_says_not_run(column):
    tree, kinds, names, strings = wide_program(2, 2)
    model = ProgramTreeViewModel(tree, kinds, names, strings, executed=False)
    assert model.text(0, column) == NOT_RUN
    assert model.text(0, 1) == "Sequence"
