"""What the Insights rules share: the report, its memory table and fit, and the sections
that could be read; a section that is damaged or absent is named with the reason, once."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_programs, checked_runs, debug_of
from profiler_core.analysis.liveness import LivenessTable, liveness_table
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.errors import ReportError
from profiler_core.insights.memory_facts import FitPanel, fit_panel

SECTION_OPTIONS = {
    "graph": "autoReport.outputGraphProfile",
    "liveness": "autoReport.outputGraphProfile",
    "programs": "autoReport.outputGraphProfile",
    "execution": "autoReport.outputExecutionProfile",
    "debug": "autoReport.outputDebugInfo",
}


def _flag(options: dict[str, str], key: str) -> bool:
    return str(options.get(key, "")).lower() in ("true", "1", "yes")


class InsightsContext:
    """One report seen by the rules. Sections are checked when first asked for."""

    def __init__(self, report: Any, debug: Any = None) -> None:
        self.report = report
        self.table: MemoryTable = memory_table(report)  # without memory there are no insights
        header = getattr(report, "header", None)
        options = getattr(header, "options", {}) or {}
        self.out_of_memory = bool(getattr(header, "out_of_memory", False))
        self.fit: FitPanel = fit_panel(self.table, _flag(options, "debug.allowOutOfMemory"))
        self._debug = debug
        self._missing: dict[str, str] = {}

    # -- sections ------------------------------------------------------------------------
    def missing(self, section: str) -> str:
        """Why ``section`` cannot be used ("" when it can)."""
        if section not in self._missing:
            self._missing[section] = self._check(section)
        return self._missing[section]

    def _check(self, section: str) -> str:
        option = SECTION_OPTIONS.get(section, "")
        try:
            if section == "graph":
                checked_graph(self.report)
            elif section == "liveness":
                self.liveness  # noqa: B018  (decode and check it)
            elif section == "programs":
                checked_programs(self.report)
            elif section == "execution":
                if not checked_runs(self.report):
                    return (
                        "the report has no execution profile: the program was compiled but "
                        f"not run, or {option} was off"
                    )
            elif section == "debug" and self.debug is None:
                return (
                    "the report has no readable debug.cbor, so operations and file:line "
                    f"are unknown ({option})"
                )
        except ReportError as error:
            return f"the {section} section could not be read ({error}); it is written with {option}"
        return ""

    @property
    def missing_sections(self) -> dict[str, str]:
        return {s: why for s, why in self._missing.items() if why}

    # -- shared, computed once -----------------------------------------------------------
    @cached_property
    def debug(self) -> Any:
        try:
            return debug_of(self.report, self._debug)
        except ReportError:
            return None

    @cached_property
    def liveness(self) -> LivenessTable:
        return liveness_table(self.report)

    @cached_property
    def executions_per_step(self) -> np.ndarray:
        """int64 (steps,): how often every run executed each program step."""
        steps = self.report.programs.num_steps
        counts = np.zeros(steps, dtype=np.int64)
        for run in checked_runs(self.report):
            counts += np.bincount(run.step_ids, minlength=steps)[:steps]
        return counts

    @property
    def memory_tight(self) -> bool:
        """Over the limit, or the fullest tile above 90% of it: memory findings then matter."""
        return not self.fit.fits or self.fit.fullest_percent > 90.0
