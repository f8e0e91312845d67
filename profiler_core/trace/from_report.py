"""A report's execution trace as a Trace: each IPU a track, each executed step a span.

Cycles become nanoseconds at the target's clock, so the run can be exported to Chrome
Trace Event JSON (Perfetto, chrome://tracing) or shown beside host traces.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from profiler_core.analysis.checks import (
    checked_programs,
    checked_run,
    checked_step_labels,
    checked_target,
    fail,
)
from profiler_core.errors import ReportError
from profiler_core.formats.pvti import EventKind
from profiler_core.model.kinds import StepKind
from profiler_core.trace.build import build_trace
from profiler_core.trace.model import Process, Thread, Trace

#: Nanosecond times are int64: a run that would end past this cannot be a trace.
_MAX_NS = 1 << 62


def execution_trace(report: Any, run: int = 0) -> Trace:
    """Run ``run`` of ``report`` on one track per IPU, with the step kind as channel."""
    execution = report.execution
    if execution is None or not execution.runs:
        raise ReportError(getattr(report, "profile_path", None), "the report has no recorded runs")
    if not 0 <= run < len(execution.runs):
        raise ReportError(
            getattr(report, "profile_path", None),
            f"run {run} does not exist; the report has runs 0..{len(execution.runs) - 1}",
        )
    # The same cross-section checks as every analysis: steps against the programs, cycles
    # against the target's IPUs, step kinds and names against their tables.
    r = checked_run(report, run)
    programs, target = checked_programs(report), checked_target(report)
    checked_step_labels(report)
    if not (math.isfinite(target.clock_hz) and target.clock_hz > 0):
        fail(report, "target", f"clock of {target.clock_hz} Hz")
    ns_per_cycle = 1e9 / target.clock_hz
    last = max(r.total_cycles, int(r.start_cycles[-1]) if r.start_cycles.size else 0)
    longest = int(programs.step_cycles.max()) if programs.step_cycles.size else 0
    if (last + longest) * ns_per_cycle >= _MAX_NS:
        fail(report, "execution", f"run {run} lasts beyond {_MAX_NS:,} ns (292 years)")
    cycles = programs.step_cycles[r.step_ids]  # (instances, IPUs)
    step_names = report.graph.strings.take(programs.step_name)
    labels = [f"Run {r.name}", *step_names]
    channels = ["Run", *(k.poplar_name for k in StepKind)]
    columns: dict[str, list[np.ndarray]] = {
        k: [] for k in ("start_ns", "end_ns", "depth", "thread", "channel", "label", "kind")
    }
    total_ns = round(r.total_cycles * ns_per_cycle)
    starts = np.round(r.start_cycles * ns_per_cycle).astype(np.int64)
    for ipu in range(target.num_ipus):
        active = cycles[:, ipu] > 0
        n = int(active.sum()) + 1
        begin = np.concatenate(([0], starts[active]))
        length = np.concatenate(
            ([total_ns], np.round(cycles[active, ipu] * ns_per_cycle).astype(np.int64))
        )
        columns["start_ns"].append(begin)
        columns["end_ns"].append(begin + length)
        columns["depth"].append(np.r_[0, np.ones(n - 1, np.int32)])
        columns["thread"].append(np.full(n, ipu, np.int32))
        kinds = programs.step_kind[r.step_ids[active]].astype(np.int32)
        columns["channel"].append(np.r_[0, kinds + 1])
        columns["label"].append(np.r_[0, r.step_ids[active].astype(np.int32) + 1])
        columns["kind"].append(np.full(n, int(EventKind.SPAN), np.uint8))
    created = report.header.created_unix
    origin = int(created * 1e9) if math.isfinite(created) and abs(created) < 9e9 else 0
    process = Process(0, "", f"{report.header.program_name or 'program'} run {run}", origin)
    threads = [Thread(f"IPU {ipu}", 0, None, "track") for ipu in range(target.num_ipus)]
    return build_trace(
        {k: np.concatenate(v) for k, v in columns.items()},
        origin_wall_ns=origin,
        labels=labels,
        channels=channels,
        threads=threads,
        processes=[process],
    )
