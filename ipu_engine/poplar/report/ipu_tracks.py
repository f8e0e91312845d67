"""Projecting a run's IPU program steps onto host time, as PVTI tracks "IPU 0", "IPU 1"...

The model's cycles become nanoseconds at the target's clock, starting when the run
started on the host, so the System Analyser shows what each IPU was doing (compute,
exchange, sync, stream copies) beside the host's own tracepoints.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ipu_engine import pvti
from ipu_engine.poplar.compiler.steps import Step
from profiler_core.model.kinds import StepKind
from profiler_core.model.profile import RunData

PHASES = {
    StepKind.ON_TILE_EXECUTE: "Compute",
    StepKind.DO_EXCHANGE: "Exchange",
    StepKind.GLOBAL_EXCHANGE: "Global exchange",
    StepKind.SYNC: "Sync",
    StepKind.STREAM_COPY_BEGIN: "Stream copy",
    StepKind.STREAM_COPY_MID: "Stream copy",
    StepKind.STREAM_COPY_END: "Stream copy",
    StepKind.PRINT_TENSOR: "Stream copy",
}


def project_run(
    steps: Sequence[Step], step_cycles: np.ndarray, clock_hz: float, run: RunData, started_ns: int
) -> None:
    """Draw ``run`` (begun on the host at ``started_ns``) on the IPU tracks: its program
    ``steps`` over time, each lasting its ``step_cycles`` (steps x IPUs) at ``clock_hz``."""
    if run.step_ids.size == 0:
        return
    ns_per_cycle = 1e9 / clock_hz
    unique_steps, label_index = np.unique(run.step_ids, return_inverse=True)
    labels = []
    for sid in unique_steps.tolist():
        step = steps[sid]
        labels.append(f"{PHASES.get(step.kind, 'Control')}: {step.name}")
    cycles = step_cycles[run.step_ids]
    starts = started_ns + np.round(run.start_cycles * ns_per_cycle).astype(np.int64)
    total_ns = round(run.total_cycles * ns_per_cycle)
    for ipu in range(cycles.shape[1]):
        active = cycles[:, ipu] > 0
        pvti.ipu_track_span(ipu, f"Run {run.name}", started_ns, started_ns + total_ns, depth=0)
        if not active.any():
            continue
        begin = starts[active]
        end = begin + np.round(cycles[active, ipu] * ns_per_cycle).astype(np.int64)
        pvti.ipu_track_spans(ipu, begin, end, labels, label_index[active], depth=1)
