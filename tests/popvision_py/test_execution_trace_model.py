"""The Execution Trace's view models without a window: lanes per layout, spans of the visible
lanes, tooltips, the tile heat map, the Summary table and the Details of a step, each checked
against a plain computation over the report's columns."""

from __future__ import annotations

import numpy as np
import pytest

from popvision_py.viewmodels.execution_summary import poplar_summary_table, summary_table
from popvision_py.viewmodels.execution_trace import ExecutionTraceModel, LaneRole, TraceLayout
from popvision_py.viewmodels.step_colors import step_kind_color_table
from popvision_py.viewmodels.step_details import balance_histogram, step_details
from popvision_py.viewmodels.tile_heatmap import TileHeatMap
from popvision_py.viewmodels.timeline import NO_KEY
from profiler_core.analysis.execution import cycle_breakdown, cycles_in_range
from profiler_core.analysis.execution_summary import ExecutionSummary
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.profiler_core.factories import make_report


@pytest.fixture
def tutorial4(tutorial4_report):
    report = open_report(tutorial4_report)
    return ExecutionTraceModel(report, report.debug)


@pytest.fixture
def synthetic():
    """2 IPUs x 4 tiles, 10 steps, 2 runs (profiler_core's factory)."""
    profile, debug = make_report(7)
    return ExecutionTraceModel(profile, debug)


def test_layouts_give_a_lane_per_ipu_or_nested_lanes(synthetic):
    assert synthetic.lane_names() == ["IPU 0", "IPU 1"]
    synthetic.set_layout(TraceLayout.FLAME)
    roles = [lane.role for lane in synthetic.lanes]
    assert roles == [LaneRole.PROGRAM, LaneRole.OPERATION, LaneRole.STEPS] * 2
    synthetic.set_bsp(True)
    assert synthetic.lane_names()[2:6] == [
        "IPU 0 Compute",
        "IPU 0 Sync",
        "IPU 0 Exchange",
        "IPU 0 Host+ctrl",
    ]
    synthetic.set_layout(TraceLayout.FLAT)
    synthetic.set_expanded(1, True)
    assert [lane.role for lane in synthetic.lanes if lane.ipu == 1][-1] == LaneRole.TILES
    assert synthetic.tile_strips() == [(1, 8)]  # after IPU 0 and IPU 1 in four phase rows each


def test_the_spans_of_ipu_0_add_up_to_the_runs_cycles(tutorial4):
    """Tutorial 4 runs on one IPU, so no step waits for another IPU: there are no idle gaps
    and the spans (instances, each as long as its cycles on IPU 0) tile the whole run."""
    total = tutorial4.total_cycles
    batch = tutorial4.spans(0, total, 4000)
    assert (batch.key >= 0).all()  # wide enough: nothing merged
    assert int((batch.end - batch.start).sum()) == total
    assert np.array_equal(batch.start[1:], batch.end[:-1])  # back to back
    run = tutorial4.report.execution.runs[0]
    assert batch.key.tolist() == run.step_ids.tolist()
    expected = step_kind_color_table()[tutorial4.report.programs.step_kind[run.step_ids]]
    assert np.array_equal(batch.color, expected)


def test_idle_cycles_of_an_ipu_waiting_for_another_are_not_spans(synthetic):
    synthetic.set_run(1)
    total = synthetic.total_cycles
    batch = synthetic.spans(0, total, 10**7)
    profile = synthetic.report
    run = profile.execution.runs[1]
    actives = []
    for ipu in (0, 1):
        mine = batch.lane == ipu
        actives.append(int(profile.programs.step_cycles[run.step_ids, ipu].sum()))
        assert int((batch.end[mine] - batch.start[mine]).sum()) == actives[-1]
    # With two IPUs an IPU waits for the slower one inside a step, so its spans leave idle
    # gaps; the steps' durations (slowest IPU) are what adds up to the run's total cycles.
    durations = int(profile.programs.step_cycles[run.step_ids].max(axis=1).sum())
    assert durations == int(cycle_breakdown(profile, 1).by_kind.sum()) == run.total_cycles
    assert max(actives) < run.total_cycles


def test_only_the_lanes_on_screen_are_asked_for(synthetic):
    synthetic.set_layout(TraceLayout.FLAME)
    synthetic.lane_window = (3, 6)  # IPU 1's three lanes
    batch = synthetic.spans(0, synthetic.total_cycles, 1000)
    assert set(batch.lane.tolist()) == {3, 4, 5}


def test_merged_spans_have_no_step_and_say_how_many(tutorial4):
    batch = tutorial4.spans(0, tutorial4.total_cycles, 2)
    merged = np.flatnonzero(batch.key == NO_KEY)
    assert merged.size
    assert "zoom in" in tutorial4.tooltip(int(merged[0]))
    assert tutorial4.span_step(int(merged[0])) == -1


def test_a_step_tooltip_names_its_kind_cycles_operation_and_tiles(tutorial4):
    tutorial4.spans(0, tutorial4.total_cycles, 4000)
    report = tutorial4.report
    index = 2  # the third instance: m4's first compute step
    step = tutorial4.span_step(index)
    assert step == 2
    cycles = report.programs.cst_cycles[report.programs.cst_cs == report.programs.step_cs[step]]
    text = tutorial4.tooltip(index)
    assert "m4/Conv_1/Convolve" in text and "OnTileExecute" in text
    assert f"{int(report.programs.step_cycles[step, 0]):,}" in text
    assert "Operation: m4 (poplin::matMul)" in text  # the op call's name and its library op
    assert f"Tiles busy: {cycles.size:,}" in text
    assert f"min {int(cycles.min()):,}" in text and f"max {int(cycles.max()):,}" in text


def test_flame_operation_spans_group_the_op_calls_steps(tutorial4):
    tutorial4.set_layout(TraceLayout.FLAME)
    batch = tutorial4.spans(0, tutorial4.total_cycles, 4000)
    operations = np.flatnonzero(batch.lane == 1)
    labels = [batch.labels[i] for i in operations.tolist()]
    assert labels == ["m4", "m5"]
    run = tutorial4.report.execution.runs[0]
    # m4's six instances come first; its span ends where m5's first instance starts
    assert batch.end[operations[0]] == run.start_cycles[6]
    assert tutorial4.span_operation(int(operations[0])) == "m4"
    assert tutorial4.operation_steps("m4").tolist() == [0, 1, 2, 3, 4, 5]


def test_the_tile_heat_map_is_each_tiles_cycles_over_the_slowest(tutorial4):
    report = tutorial4.report
    heat = TileHeatMap(report)
    step = 2
    programs = report.programs
    rows = programs.cst_cs == programs.step_cs[step]
    tiles, cycles = programs.cst_tile[rows], programs.cst_cycles[rows].astype(float)
    expected = np.zeros(report.target.tiles_per_ipu)
    expected[tiles] = cycles / cycles.max()
    got = heat.step_rows(step, 0, report.target.tiles_per_ipu)  # a pixel row per tile
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    coarse = heat.step_rows(step, 0, 8)
    np.testing.assert_allclose(coarse, expected.reshape(8, -1).max(axis=1), rtol=1e-6)
    run = report.execution.runs[0]
    start = run.start_cycles[2]
    values, column_step = heat.image(0, 0, start, start + 100, 50, 8)
    assert (column_step == step).all()
    np.testing.assert_allclose(values[:, 0], coarse)


def test_the_summary_table_holds_the_breakdown_and_the_visible_range(tutorial4):
    report = tutorial4.report
    whole = cycle_breakdown(report, 0)
    visible = cycles_in_range(report, 0, 1000, 9000)
    table = summary_table(whole, visible)
    headers = [c.header for c in table.columns]
    kinds = [table.raw(r, 0) for r in range(len(table))]
    assert kinds == ["OnTileExecute", "DoExchange", "Sync"]
    cycles = [table.raw(r, headers.index("Cycles (run)")) for r in range(len(table))]
    assert cycles == [int(whole.by_kind[StepKind.from_poplar_name(k)]) for k in kinds]
    shown = [table.raw(r, headers.index("Cycles (visible)")) for r in range(len(table))]
    assert sum(shown) == 8000  # the range is covered by steps on one IPU


def test_step_details_count_vertices_per_codelet_and_exchange_bytes(tutorial4):
    report = tutorial4.report
    graph, programs = report.graph, report.programs
    details = step_details(report, 2, report.debug)
    cs = programs.step_cs[2]
    assert details.codelets.raw(0, 1) == int(graph.vc_count[graph.vc_cs == cs].sum())
    values = dict(
        zip(details.properties.columns[0].values, details.properties.columns[1].values, strict=True)
    )
    assert values["Operation"] == "poplin::matMul"
    exchange = step_details(report, 1, report.debug)
    values = dict(
        zip(
            exchange.properties.columns[0].values,
            exchange.properties.columns[1].values,
            strict=True,
        )
    )
    assert (
        values["Bytes exchanged in"]
        == f"{int(programs.exch_bytes_in[programs.exch_step == 1].sum()):,}"
    )
    counts, edges = balance_histogram(details.balance)
    assert counts.sum() == details.balance.tiles.size
    assert edges[0] == details.balance.min and edges[-1] == details.balance.max


def test_only_existing_runs_can_be_picked(synthetic):
    assert len(synthetic.run_labels()) == 2
    synthetic.set_run(1)
    assert synthetic.total_cycles == synthetic.report.execution.runs[1].total_cycles
    with pytest.raises(IndexError, match="no run 99"):
        synthetic.set_run(99)


def test_poplars_execution_summary_table_words_the_figures_like_poplar():
    """The figures Poplar printed for tutorial 6 show as Poplar printed them."""
    summary = ExecutionSummary(
        run=0,
        name="tut6",
        total_cycles=6_681_766,
        clock_hz=1.33e9,
        compute_incl=3_801.8,
        compute_excl=None,
        ipu_exchange=8_697.4,
        global_exchange=0.0,
        host_exchange=6_663_550.8,
        sync=1_134.8,
    )
    table = poplar_summary_table(summary)
    rows = [[table.columns[c].display(r) for c in range(3)] for r in range(7)]
    assert rows[0] == ["Total cycles", "6,681,766", "100.0%"]
    assert rows[1] == ["Tile average compute cycles (including idle threads)", "3,801.8", "0.1%"]
    assert rows[2][1:] == ["not recorded", ""]
    assert rows[5] == ["Tile average host exchange cycles", "6,663,550.8", "99.7%"]
    assert rows[6] == ["Tile average sync cycles", "1,134.8", "0.0%"]
