"""What-if: each Insights suggestion re-planned by the engine and its effect shown as
numbers before the user changes a line. The report's serialized graph
(``autoReport.outputSerializedGraph``) is built again with each suggested change by the
engine in a child process (``python -m ipu_engine.replan``; profiler_core never imports
it), several values per option; the best value for what the program needs is kept, a
change that does nothing or harms is dropped. ``what_if(report)`` returns them all."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from profiler_core.analysis.checks import checked_runs
from profiler_core.analysis.liveness import liveness_table
from profiler_core.errors import ReportError
from profiler_core.formats.serialized_graph import (
    GRAPH_FILE,
    WRITTEN_WITH,
    SerializedGraph,
    read_serialized_graph,
)
from profiler_core.insights import Insights, insights
from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Finding
from profiler_core.insights.pipeline_balance import pipeline_balance
from profiler_core.insights.whatif.child import Progress, ask_engine
from profiler_core.insights.whatif.choose import Choice, Figures, Tried, choose
from profiler_core.insights.whatif.trials import Trial, distinct, trials_for
from profiler_core.insights.whatif.words import choice_dict, sentence, throughput

__all__ = ["TRYABLE_RULES", "Choice", "Figures", "Trial", "WhatIf", "what_if"]

#: findings whose suggestion a what-if can re-plan (when the report carries its graph)
TRYABLE_RULES = frozenset(
    {"temporaries-at-peak", "exchange-buffers", "fp16-candidates", "over-limit", "pipeline-balance"}
)


@dataclass(frozen=True)
class WhatIf:
    """The what-if of one report: ``available`` False (with ``reason``) when it could not
    be made; else each trial's choice, kept ones first in the findings' order."""

    available: bool
    reason: str
    now: Figures | None
    choices: list[Choice] = field(default_factory=list)
    seconds: float = 0.0
    cycles_basis: str = ""
    words: dict[int, str] = field(default_factory=dict)  # id(choice) -> its sentence
    extra: dict[int, dict[str, Any]] = field(default_factory=dict)  # id(choice) -> JSON

    @property
    def kept(self) -> list[Choice]:
        return [c for c in self.choices if c.kept]

    @property
    def dropped(self) -> list[Choice]:
        return [c for c in self.choices if not c.kept]

    def sentence(self, choice: Choice) -> str:
        return self.words.get(id(choice), "")

    def to_dict(self) -> dict[str, Any]:
        if not self.available:
            return {"available": False, "reason": self.reason}
        assert self.now is not None
        return {
            "available": True,
            "seconds": round(self.seconds, 3),
            "cycles_basis": self.cycles_basis,
            "now": self.now.to_dict(),
            "suggestions": [
                choice_dict(c, self.now, self.sentence(c), self.extra.get(id(c), {}))
                for c in self.kept
            ],
            "dropped": [self._dropped(c) for c in self.dropped],
        }

    def _dropped(self, choice: Choice) -> dict[str, Any]:
        """A dropped trial: why, and what its best value was predicted to give."""
        trial, best = choice.trial, choice.best
        out: dict[str, Any] = {
            "rule": trial.rule,
            "change": {"operation": trial.operation, "option": trial.option},
            "reason": choice.reason,
        }
        if best is not None and best.figures is not None:
            out["change"]["value"] = best.value
            out["predicted"] = best.figures.to_dict()
        return out | self.extra.get(id(choice), {})


def current_figures(report: Any, ctx: InsightsContext) -> tuple[Figures, list[int], str]:
    """What the report shows now, the engine programs its runs ran, and what the cycles
    are of."""
    runs = checked_runs(report)
    table = liveness_table(report)
    if runs:
        programs = [int(r.program) for r in runs]
        total: int | None = sum(int(r.total_cycles) for r in runs)
        basis = f"the report's {len(runs)} run{'s' if len(runs) != 1 else ''}"
    else:
        programs, total = [0], None
        basis = "one run of engine program 0 (the report has no execution profile)"
    fit = ctx.fit
    figures = Figures(
        fit.fits,
        fit.fullest_bytes,
        len(fit.tiles_over),
        table.peak_bytes,
        total,
        fit.bytes_per_tile,
    )
    return figures, programs, basis


def read_graph(report: Any) -> SerializedGraph:
    """The report's serialized graph; a ``ReportError`` saying how to get it when absent."""
    path = report.folder / GRAPH_FILE
    if not path.exists():
        raise ReportError(
            path,
            f"the report has no serialized graph, so its suggestions cannot be re-planned: "
            f"write the report again with {WRITTEN_WITH}",
        )
    return read_serialized_graph(path, report.header.report_id)


def what_if(
    report: Any,
    found: Insights | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    python: str | None = None,
    only: Finding | None = None,
) -> WhatIf:
    """Predict every suggestion of ``report`` (see the module), or only ``only``'s (the
    Insights page's "Try it"). Raises only for a report whose target or memory cannot be
    read; a missing or damaged graph, or an engine that cannot run, makes an unavailable
    what-if that says why."""
    t0 = time.perf_counter()
    ctx = InsightsContext(report)
    found = found if found is not None else insights(report)
    try:
        graph = read_graph(report)
        if graph.problems:
            raise ReportError(graph.path, f"its record cannot be replayed: {graph.problems[0]}")
    except ReportError as error:
        return WhatIf(False, str(error), None)
    now, programs, basis = current_figures(report, ctx)
    balance = pipeline_balance(report) if not ctx.missing("execution") else None
    trials = trials_for(ctx, found, graph.record, balance)
    if only is not None:
        trials = [t for t in trials if (t.rule, t.title) == (only.rule, only.title)]
    trials = distinct(trials)
    requests = [
        {"id": f"{t.id}:{i}", "change": t.change(v)} for t in trials for i, v in enumerate(t.values)
    ]
    try:
        answers = ask_engine(
            graph.path, graph.report_id, programs, requests, progress, cancel, python
        )
    except ReportError as error:
        return WhatIf(False, str(error), now)
    choices, words, extra = [], {}, {}
    for trial in trials:
        tried = []
        for i, value in enumerate(trial.values):
            answer = answers.get(f"{trial.id}:{i}")
            if answer is None:
                tried.append(Tried(value, None, "the engine gave no answer"))
            elif answer.predicted is None:
                tried.append(Tried(value, None, answer.error))
            elif answer.predicted.get("same_as_recorded"):
                tried.append(Tried(value, now))  # every plan as recorded: the report's figures
            else:
                tried.append(Tried(value, Figures.from_child(answer.predicted)))
        choice = choose(trial, tried, now)
        if trial.option == "pipelineStage":
            extra[id(choice)] = throughput(graph.record, report, choice, now)
        words[id(choice)] = sentence(choice, now, extra.get(id(choice), {}))
        choices.append(choice)
    choices.sort(key=lambda c: not c.kept)
    return WhatIf(True, "", now, choices, time.perf_counter() - t0, basis, words, extra)
