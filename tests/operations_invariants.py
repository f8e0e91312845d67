"""The Operations page's invariants (issue 38), checked over any report: every grouping's
cycles sum to the runs' total and each row to its own total, and the memory columns agree
with Liveness and Memory. The expected totals are recounted from the report's columns with
plain loops, not taken from the analysis under test."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.operations import operations_table
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report.summary import report_summary


def step_cycles(report) -> np.ndarray:
    """Each program step's cycles over every run: executions x its slowest IPU's cycles."""
    p = report.programs
    executions = np.zeros(p.num_steps, dtype=np.int64)
    for run in report.execution.runs:
        for step in run.step_ids.tolist():
            executions[step] += 1
    return executions * p.step_cycles.max(axis=1)


def check_cycles_add_up(report, group_by: str) -> None:
    table = operations_table(report, group_by)
    runs = sum(s.cycles for s in report_summary(report).runs)
    assert int(table.total_cycles.sum()) == runs == int(step_cycles(report).sum()) > 0
    classes = table.compute_cycles + table.exchange_cycles + table.sync_cycles
    assert np.array_equal(classes + table.other_cycles, table.total_cycles)
    assert np.array_equal(table.phase_cycles.sum(axis=1), table.total_cycles)
    assert table.phase_cycles.shape == (len(table), len(table.phase_labels))


def check_memory_columns(report, group_by: str) -> None:
    table = operations_table(report, group_by)
    summary = report_summary(report)
    assert int(table.live_at_peak_bytes.sum()) == summary.peak_live_bytes
    assert int(table.variable_bytes.sum()) == int(report.graph.var_bytes.sum())
    assert (table.live_at_peak_bytes <= table.variable_bytes).all()
    code = memory_table(report).by_category[MemoryCategory.VERTEX_CODE].sum()
    assert int(table.own_code_bytes.sum()) + table.shared_code_bytes == code
    assert (table.own_code_bytes <= table.code_bytes).all()
