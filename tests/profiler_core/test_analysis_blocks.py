"""Issue 43: lightweight profiling's executions read back from engine-made reports, held
against the detailed trace of the same run (computed here from the report's program tree
and steps, not by the analysis), and the analysis's totals, lanes and windows."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.blocks import (
    MERGED,
    block_executions,
    block_lanes,
    block_totals,
    lane_window,
)
from profiler_core.report import open_report
from tests.lightweight_reports import lightweight_report


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lightweight")
    return {name: open_report(lightweight_report(folder, name)) for name in ("pipeline", "growing")}


def _subtree(parents: np.ndarray, node: int) -> np.ndarray:
    """Whether each program node is ``node`` or below it (parents precede children)."""
    inside = np.zeros(len(parents), dtype=bool)
    inside[node] = True
    for i in range(node + 1, len(parents)):
        inside[i] = parents[i] >= 0 and inside[parents[i]]
    return inside


@pytest.mark.parametrize(("name", "block"), [("pipeline", "stage1"), ("pipeline", "stage2"),
                                             ("growing", "operation")])  # fmt: skip
def test_a_blocks_cycles_total_the_detailed_traces_cycles_of_its_program(reports, name, block):
    report = reports[name]
    blocks, programs, run = report.blocks, report.programs, report.execution.runs[0]
    names = blocks.strings.tolist()
    b = [names[i] for i in blocks.block_name.tolist()].index(block)
    # the detailed trace, independently: the run's step instances under the block's program
    in_block = _subtree(programs.node_parent, int(blocks.block_node[b]))[
        programs.step_node[run.step_ids]
    ]
    durations = programs.step_cycles.max(axis=1)[run.step_ids]  # IPUs step together
    mine = blocks.exec_block == b
    ipus = np.unique(blocks.exec_ipu[mine])
    for ipu in ipus.tolist():
        on = mine & (blocks.exec_ipu == ipu)
        assert int((blocks.exec_end - blocks.exec_start)[on].sum()) == int(
            durations[in_block].sum()
        )
    # each execution starts where an instance under the program starts (run 0 starts at 0)
    starts = set(run.start_cycles[in_block].tolist())
    assert set(blocks.exec_start[mine].tolist()) <= starts


def test_executions_are_numbered_per_block_run_and_ipu_in_time_order(reports):
    executions = block_executions(reports["pipeline"])
    names = executions.names()
    for block in ("stage1", "stage2"):
        rows = [i for i, n in enumerate(names) if n == block]
        assert executions.index[rows].tolist() == [0, 1, 2, 3, 4]
        assert (np.diff(executions.start[rows]) > 0).all()
    # op2 runs on both IPUs: each IPU counts its own five
    op2 = np.array([n == "op2" for n in names])
    for ipu in (0, 1):
        assert executions.index[op2 & (executions.ipu == ipu)].tolist() == [0, 1, 2, 3, 4]


def test_block_totals_count_each_block_on_each_ipu(reports):
    executions = block_executions(reports["growing"])
    totals = block_totals(executions)
    assert len(totals) == 1 and totals.executions.tolist() == [5]
    cycles = executions.cycles
    assert totals.total.tolist() == [int(cycles.sum())]
    assert (totals.shortest[0], totals.longest[0]) == (cycles.min(), cycles.max())
    assert totals.mean[0] == pytest.approx(cycles.mean())


def test_lanes_are_per_ipu_and_depth_and_windows_merge_below_a_pixel(reports):
    executions = block_executions(reports["pipeline"])
    lanes = block_lanes(executions)
    assert [lane.name for lane in lanes] == ["IPU 0", "IPU 0 level 2", "IPU 1", "IPU 1 level 2"]
    assert [len(lane.rows) for lane in lanes] == [5, 5, 5, 5]
    end = int(executions.end.max())
    wide = lane_window(executions, lanes[0], 0, end, 10_000)
    assert len(wide) == 5 and (wide.row != MERGED).all() and wide.count.tolist() == [1] * 5
    # 8 pixels for ~72,000 cycles: a 7,200-cycle stage is under a pixel (9,000 cycles), and
    # stages 7,200 cycles apart join: the five become one merged span
    narrow = lane_window(executions, lanes[0], 0, end, 8)
    assert narrow.count.tolist() == [5] and narrow.row.tolist() == [MERGED]
    assert (narrow.start[0], narrow.end[0]) == (executions.start[lanes[0].rows[0]],
                                                executions.end[lanes[0].rows[-1]])  # fmt: skip
    # a window of the second stage alone finds it with binary searches
    second = lanes[0].rows[1]
    one = lane_window(
        executions, lanes[0], executions.start[second] + 1, executions.start[second] + 2, 100
    )
    assert one.row.tolist() == [second]


def test_a_report_without_lightweight_profiling_has_no_executions(tutorial4_report):
    assert block_executions(open_report(tutorial4_report)) is None
