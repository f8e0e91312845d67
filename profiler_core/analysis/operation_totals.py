"""The Operations table's totals beside the same figures on the other pages: its cycles and
the runs' (Summary), its own code plus the shared code and Memory's Vertex code, its live at
peak bytes and the Liveness peak. The view's totals line and ``popvision-cli operations``
show these; a figure another page cannot give (a damaged section) is None, and said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from profiler_core.analysis.checks import selected_runs
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.operations import OperationsTable
from profiler_core.errors import ReportError
from profiler_core.model.kinds import MemoryCategory


@dataclass(frozen=True)
class OperationTotals:
    cycles: int  # every row's total cycles
    runs_cycles: int | None  # the runs counted, as the Summary lists them
    own_code: int  # every row's own code
    shared_code: int  # code several rows share, once
    vertex_code: int | None  # Memory's Vertex code, every tile
    variable_bytes: int  # every row's variables, added up (not all live at once)
    live_at_peak: int  # every row's variables live at the Liveness peak
    liveness_peak: int | None  # Liveness's peak bytes (always-live included)
    peak_step: int
    #: Why a figure of another page is None: its section's error (a damaged memory section)
    errors: list[str] = field(default_factory=list)

    def rows(self) -> list[tuple[str, int, int | None, str]]:
        """(figure, the operations' sum, the other page's figure or None, that page)."""
        return [
            ("cycles", self.cycles, self.runs_cycles, "Summary: the runs' cycles"),
            (
                "vertex code: own + shared once",
                self.own_code + self.shared_code,
                self.vertex_code,
                "Memory: Vertex code",
            ),
            (
                f"variables live at the peak (step {self.peak_step})",
                self.live_at_peak,
                self.liveness_peak,
                "Liveness: peak",
            ),
            ("variables, added up (not all live at once)", self.variable_bytes, None, ""),
        ]


def operation_totals(
    report: Any, table: OperationsTable, run: int | None = None
) -> OperationTotals:
    """``table``'s totals (made for run ``run``, every run when None) and the other pages'."""

    errors: list[str] = []

    def attempt(figure: Any) -> int | None:
        try:
            return int(figure())
        except ReportError as error:
            errors.append(str(error))
            return None

    runs_cycles = attempt(lambda: sum(r.total_cycles for r in selected_runs(report, run)))
    vertex_code = attempt(
        lambda: memory_table(report).by_category[MemoryCategory.VERTEX_CODE].sum()
    )
    liveness_peak = attempt(lambda: liveness_table(report).peak_bytes)
    return OperationTotals(
        cycles=int(table.total_cycles.sum()),
        runs_cycles=runs_cycles,
        own_code=int(table.own_code_bytes.sum()),
        shared_code=int(table.shared_code_bytes),
        vertex_code=vertex_code,
        variable_bytes=int(table.variable_bytes.sum()),
        live_at_peak=int(table.live_at_peak_bytes.sum()),
        liveness_peak=liveness_peak if table.peak_step >= 0 else None,
        peak_step=table.peak_step,
        errors=list(dict.fromkeys(errors)),
    )
