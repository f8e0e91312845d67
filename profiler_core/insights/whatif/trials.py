"""What a what-if tries for each finding: the option to change, on which operation, and
several values -- chosen by the data, not one formula's guess. A program that does not
fit (or is tight, its fullest tile within 10% of the limit) is tried with less memory for
its planned ops' temporaries, its weights in half, more IPUs; one far from the limit with
more memory per planned op (for speed) and half weights; a pipeline with its bounding
stage's boundary layers moved to the neighbouring stages."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from profiler_core.insights import Insights
from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Finding, SourceRef
from profiler_core.insights.pipeline_balance import PipelineBalance
from profiler_core.insights.planned_ops import PLANNED_OPS, PlannedOp, planned_op, raised_proportion
from profiler_core.insights.weights import weight_reads

AMP = "availableMemoryProportion"
DEFAULT_PROPORTION = 0.6  # poplin's, for a report that does not record the proportion
LOWER = (0.5, 0.25, 0.1)  # fractions of the current proportion tried when memory is short
LOWEST = (0.05, 0.02, 0.01)
HIGHER = (0.7, 0.8, 0.9, 1.0)
PLANNED_RULES = ("temporaries-at-peak", "exchange-buffers")
TIE = 0.02  # stages within this share of the bounding one are tried too


@dataclass(frozen=True)
class Trial:
    """One suggestion to predict: ``option`` of ``operation`` at each of ``values``, and
    what it is for: ``fit`` (the program does not fit), ``memory`` (it is tight) or
    ``speed`` (it has room: fewer cycles)."""

    id: str
    rule: str
    title: str
    operation: str
    option: str
    values: tuple[Any, ...]
    goal: str
    source: SourceRef = field(default_factory=SourceRef)
    tensors: tuple[str, ...] = ()

    def change(self, value: Any) -> dict[str, Any]:
        change = {"operation": self.operation, "option": self.option, "value": value}
        if self.tensors:
            change["tensors"] = list(self.tensors)
        return change


def goal_of(ctx: InsightsContext) -> str:
    if not ctx.fit.fits:
        return "fit"
    return "memory" if ctx.memory_tight else "speed"


def _hundredths(value: float) -> float:
    step = 0.01 if value >= 0.01 else 10 ** math.floor(math.log10(value))
    return round(math.floor(value / step + 1e-9) * step, 12)


def amp_values(op: PlannedOp, ctx: InsightsContext) -> tuple[float, ...]:
    """Proportions to try for ``op``: below its own when memory is short (halving, then
    the smallest shares), else above it up to what the fullest tile's headroom allows."""
    current = op.proportion if op.proportion is not None else DEFAULT_PROPORTION
    bytes_per_tile = ctx.fit.bytes_per_tile
    if ctx.memory_tight or not ctx.fit.fits:
        advised = op.advised_proportion(bytes_per_tile)
        picks = [current * f for f in LOWER] + list(LOWEST) + ([advised] if advised else [])
        values = {_hundredths(v) for v in picks if 0 < v < current}
        return tuple(sorted((v for v in values if 0 < v < current), reverse=True))
    top = raised_proportion(op, bytes_per_tile, ctx.fit.headroom_bytes) or 1.0
    values = {v for v in HIGHER if current < v <= top} | ({top} if top > current else set())
    return tuple(sorted(values))


def _planned(ctx: InsightsContext, source: SourceRef) -> PlannedOp | None:
    debug = ctx.debug
    if debug is None or source.op not in PLANNED_OPS or not source.operation:
        return None
    for context, name in enumerate(debug.name):
        if name == source.operation and debug.op[context] in PLANNED_OPS:
            return planned_op(debug, context)
    return None


def _amp_trials(ctx: InsightsContext, finding: Finding, ident: str) -> list[Trial]:
    op = _planned(ctx, finding.source)
    if op is None:
        return []
    values = amp_values(op, ctx)
    if not values:
        return []
    return [
        Trial(
            ident, finding.rule, finding.title, op.name, AMP, values, goal_of(ctx), finding.source
        )
    ]


def _half_trial(ctx: InsightsContext, finding: Finding, ident: str) -> list[Trial]:
    graph = ctx.report.graph
    reads = weight_reads(graph, ctx.debug)
    if not len(reads):
        return []
    names = tuple(dict.fromkeys(graph.strings.take(graph.var_name[reads.var])))
    return [
        Trial(
            ident,
            finding.rule,
            finding.title,
            finding.source.operation,
            "type",
            ("half",),
            goal_of(ctx),
            finding.source,
            names,
        )
    ]


def layers_by_stage(record: dict[str, Any]) -> dict[int, list[str]]:
    """A framework record's layers (an op's framework op, else its outermost scope) in each
    pipeline stage, in order, from its forward nodes."""
    training = record.get("training") or {}
    loss_from = training.get("loss_from", 1 << 62)
    stages: dict[int, list[str]] = {}
    for row in record["trace"]["nodes"]:
        node_id, op, stage, scope, name = row[0], row[1], row[7], row[8], row[11]
        if op in ("input", "param", "const") or stage < 0 or node_id >= loss_from:
            continue
        framework = [s[0] for s in scope if isinstance(s, list)]
        unit = framework[0] if framework else (scope[0] if scope else name)
        layers = stages.setdefault(int(stage), [])
        if unit not in layers:
            layers.append(str(unit))
    return stages


def _pipeline_trials(
    balance: PipelineBalance, record: dict[str, Any], finding: Finding, start: int
) -> list[Trial]:
    if record["kind"] != "framework":
        return []
    stages = layers_by_stage(record)
    count = len(stages)
    peak = int(balance.stage_cycles.max())
    bound = [int(s) for s, c in enumerate(balance.stage_cycles.tolist()) if c >= (1 - TIE) * peak]
    trials: list[Trial] = []
    for stage in bound:
        layers = stages.get(stage, [])
        moves = []
        if stage > 0 and len(layers) > 1:
            moves.append((layers[0], stage - 1))
        if stage < count - 1 and len(layers) > 1:
            moves.append((layers[-1], stage + 1))
        for layer, target in moves:
            trials.append(
                Trial(
                    f"t{start + len(trials)}",
                    finding.rule,
                    finding.title,
                    layer,
                    "pipelineStage",
                    (target,),
                    "speed",
                )
            )
    return trials


def trials_for(
    ctx: InsightsContext,
    found: Insights,
    record: dict[str, Any] | None,
    balance: PipelineBalance | None,
) -> list[Trial]:
    """Every trial the findings suggest, in the findings' order."""
    trials: list[Trial] = []
    for finding in found.findings:
        ident = f"t{len(trials)}"
        if finding.rule in PLANNED_RULES:
            trials += _amp_trials(ctx, finding, ident)
        elif finding.rule == "fp16-candidates" and ctx.debug is not None:
            trials += _half_trial(ctx, finding, ident)
        elif finding.rule == "over-limit" and record is not None and record["kind"] == "framework":
            ipus = ctx.report.target.num_ipus
            values = (ipus + 1, 2 * ipus) if ipus > 1 else (2,)
            trials.append(Trial(ident, finding.rule, finding.title, "", "ipus", values, "fit"))
        elif finding.rule == "pipeline-balance" and balance is not None and record is not None:
            trials += _pipeline_trials(balance, record, finding, len(trials))
    return trials


def distinct(trials: list[Trial]) -> list[Trial]:
    """``trials`` without repeats: two findings about one op suggest one change, predicted
    once (the first finding's)."""
    seen: set[tuple] = set()
    unique = []
    for trial in trials:
        key = (trial.operation, trial.option, trial.values, trial.tensors)
        if key not in seen:
            seen.add(key)
            unique.append(trial)
    return unique
