"""Which runs a program view counts, and a report seen without its runs when the execution
profile is missing or damaged (the program structure still shows, cycles say "not run")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from popvision_py.viewmodels.opened import OpenedReport

NO_EXECUTION = (
    "This report has no execution profile, so cycles and executions show as not run. "
    "Run the program with autoReport.outputExecutionProfile (or autoReport.all) to record them."
)


class WithoutRuns:
    """A report whose ``execution`` is None; everything else is the report's."""

    execution = None

    def __init__(self, report: Any) -> None:
        self._report = report

    def __getattr__(self, name: str) -> Any:
        return getattr(self._report, name)


@dataclass(frozen=True)
class CountedRuns:
    report: Any  # the report, or WithoutRuns(report)
    run: int | None  # the run counted, None for every run
    num_runs: int
    note: str  # why cycles are missing ("" when they are there)

    @property
    def executed(self) -> bool:
        return not self.note


def counted_runs(opened: OpenedReport) -> CountedRuns:
    """The shared selection's run when the report has several, else every run (one)."""
    report = opened.report
    if opened.missing("execution") is not None:
        note = f"{NO_EXECUTION}\n\n{opened.missing('execution')}"
        return CountedRuns(WithoutRuns(report), None, 0, note)
    execution = report.execution
    runs = 0 if execution is None else len(execution.runs)
    if runs == 0:
        return CountedRuns(WithoutRuns(report), None, 0, NO_EXECUTION)
    run = opened.selection.run if runs > 1 and 0 <= opened.selection.run < runs else None
    return CountedRuns(report, run, runs, "")
