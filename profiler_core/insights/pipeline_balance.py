"""Pipeline balance: in a pipelined program (the front end's ``rampUp<k>``, ``steadyState``
and ``rampDown<k>`` time steps), the cycles each stage's IPU works per steady-state time
step, the stage that bounds throughput, and the bubble of ramp-up and ramp-down -- read
from the report's program steps, grouped by the pipeline phase each belongs to: the phase
Operations attributes it to (``analysis/attribution.py``: the ``pipeline::steadyState``,
``rampUp`` and ``rampDown`` calls above it) when the report has its debug contexts, else
the phase's node of the program tree by name.

A steady-state time step runs every stage side by side, each on its IPU, and lasts as long
as its slowest IPU in each of its program steps; so the stage with the most cycles bounds
the pipeline. The bubble is the stage-time idle during ramp-up and ramp-down (a stage
waiting for its first micro-batch, or done with its last) over all the pipeline's
stage-time: each IPU's idle cycles in a ramp step are the step's cycles less its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.attribution import PIPELINE_PHASES, phase_mask, step_pieces
from profiler_core.analysis.program_tree import program_tree, subtree_ends
from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Evidence, Finding, Severity

STEADY = "steadyState"
STEADY_OP, RAMP_OPS = PIPELINE_PHASES[1], (PIPELINE_PHASES[0], PIPELINE_PHASES[2])
RAMP = re.compile(r"ramp(Up|Down)\d+")
IMBALANCE = 1.15  # the bounding stage over the mean stage: a warning from here


@dataclass(frozen=True)
class PipelineBalance:
    """One run's pipeline: per IPU (stage) cycles per steady-state time step, and more."""

    run: int
    stage_cycles: np.ndarray  # int64 (IPUs,) each IPU's active cycles per steady time step
    time_step_cycles: int  # cycles of one steady-state time step (slowest IPU per step)
    steady_steps: int  # steady-state time steps in the run
    ramp_cycles: int  # cycles of the ramp-up and ramp-down time steps
    pipeline_cycles: int  # cycles of every time step of the pipeline
    ramp_idle_cycles: int  # stage-cycles idle in ramp-up and ramp-down
    stages: int  # IPUs the pipeline's stages run on

    @property
    def bound_stage(self) -> int:
        """The IPU whose stage works the most per steady-state time step."""
        return int(np.argmax(self.stage_cycles))

    @property
    def bubble_fraction(self) -> float:
        stage_time = self.stages * self.pipeline_cycles
        return self.ramp_idle_cycles / stage_time if stage_time else 0.0

    @property
    def imbalance(self) -> float:
        """The bounding stage's cycles over the mean stage's."""
        mean = float(self.stage_cycles.mean()) if self.stage_cycles.size else 0.0
        return float(self.stage_cycles.max()) / mean if mean else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "stage_cycles": self.stage_cycles.tolist(),
            "time_step_cycles": self.time_step_cycles,
            "steady_steps": self.steady_steps,
            "bound_stage": self.bound_stage,
            "bubble_fraction": round(self.bubble_fraction, 4),
            "ramp_cycles": self.ramp_cycles,
            "pipeline_cycles": self.pipeline_cycles,
        }


def pipeline_balance(report: Any, run: int = 0) -> PipelineBalance | None:
    """The balance of run ``run``'s pipeline, or None when the report has no pipeline or
    no run of it."""
    programs = report.programs
    names = [report.graph.strings[int(i)] for i in programs.node_name]
    steady = [n for n, name in enumerate(names) if name == STEADY]
    ramps = [n for n, name in enumerate(names) if RAMP.fullmatch(name)]
    runs = report.execution.runs if report.execution is not None else []
    if not steady or not 0 <= run < len(runs):
        return None
    tree = program_tree(report, run)
    cycles = np.asarray(programs.step_cycles, dtype=np.int64)  # (steps, IPUs)
    duration = cycles.max(axis=1)
    executed = tree.step_executions
    in_steady, in_ramps = _phases(report, run, steady, ramps)
    steady_steps_ids = np.flatnonzero(in_steady & (executed > 0))
    ramp_steps_ids = np.flatnonzero(in_ramps & (executed > 0))
    if not steady_steps_ids.size:
        return None
    times = int(sum(max(int(programs.node_count[n]), 1) * int(tree.executions[n]) for n in steady))
    times = max(times, 1)
    per_ipu = (cycles[steady_steps_ids] * executed[steady_steps_ids, None]).sum(axis=0)
    active = np.flatnonzero(per_ipu > 0)
    stage_ipus = np.arange(active.min(), active.max() + 1) if active.size else np.zeros(0, int)
    steady_cycles = int((duration[steady_steps_ids] * executed[steady_steps_ids]).sum())
    ramp_executed = executed[ramp_steps_ids]
    ramp_cycles = int((duration[ramp_steps_ids] * ramp_executed).sum())
    ramp_ipu = cycles[ramp_steps_ids][:, stage_ipus]
    idle = (duration[ramp_steps_ids, None] - ramp_ipu) * ramp_executed[:, None]
    return PipelineBalance(
        run=run,
        stage_cycles=(per_ipu[stage_ipus] // times).astype(np.int64),
        time_step_cycles=steady_cycles // times,
        steady_steps=times,
        ramp_cycles=ramp_cycles,
        pipeline_cycles=steady_cycles + ramp_cycles,
        ramp_idle_cycles=int(idle.sum()),
        stages=int(stage_ipus.size),
    )


def _phases(
    report: Any, run: int, steady: list[int], ramps: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each step is in the steady state, and in a ramp: by Operations' phases when
    the debug contexts are there, else by the phases' program tree nodes."""
    programs = report.programs
    debug = report.debug_or_none() if hasattr(report, "debug_or_none") else None
    if debug is not None and phase_mask(debug, PIPELINE_PHASES).any():
        runs = [report.execution.runs[run]]
        phase = step_pieces(programs, report.graph, runs, debug).step_phase
        ops = np.array([debug.op[int(c)] if c >= 0 else "" for c in phase.tolist()], dtype=object)
        return ops == STEADY_OP, np.isin(ops, RAMP_OPS)
    ends = subtree_ends(programs.node_parent)
    step_node = programs.step_node

    def under(nodes: list[int]) -> np.ndarray:
        inside = np.zeros(len(step_node), dtype=bool)
        for node in nodes:
            inside |= (step_node >= node) & (step_node < ends[node])
        return inside

    return under(steady), under(ramps)


def pipeline_finding(ctx: InsightsContext) -> list[Finding]:
    """The stage bounding a pipeline's throughput and its ramp-up/ramp-down bubble."""
    balance = pipeline_balance(ctx.report)
    if balance is None or balance.stages < 2:
        return []
    bound = balance.bound_stage
    per_stage = ", ".join(f"IPU {i}: {c:,}" for i, c in enumerate(balance.stage_cycles.tolist()))
    severity = Severity.WARNING if balance.imbalance >= IMBALANCE else Severity.INFO
    return [
        Finding(
            rule="pipeline-balance",
            severity=severity,
            title=f"Pipeline stage on IPU {bound} bounds throughput: "
            f"{int(balance.stage_cycles[bound]):,} cycles per steady-state time step, "
            f"{balance.imbalance:.2f}x the mean stage",
            evidence=(
                Evidence("Cycles per steady-state time step, by stage", per_stage),
                Evidence("Steady-state time step", balance.time_step_cycles, "cycles"),
                Evidence("Steady-state time steps", balance.steady_steps),
                Evidence(
                    "Bubble (idle in ramp-up and ramp-down)", 100 * balance.bubble_fraction, "%"
                ),
                Evidence("Ramp-up and ramp-down", balance.ramp_cycles, "cycles"),
            ),
            suggestion=(
                f"Move a layer from the stage on IPU {bound} to a neighbouring stage so the "
                "stages do similar work (nn.begin_block / pipeline_stage split points); more "
                "micro-batches per step shrink the bubble."
            ),
            weight=float(1 - 1 / balance.imbalance) if balance.imbalance > 0 else 0.0,
        )
    ]
