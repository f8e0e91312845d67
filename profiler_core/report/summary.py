"""The report summary: what the Summary view and ``popvision-cli summary`` show first.

Built from the profile's sections (header, target, memory, liveness, step names, run
totals), which decode without copying. A damaged section leaves its fields None and its error in
``errors``, so a partial report still summarises what it can.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from profiler_core.analysis.execution import run_totals
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.memory import memory_table
from profiler_core.errors import ReportError
from profiler_core.formats.profile_pop.checksums import PROGRAM_STEPS

SECTIONS = ("target", "graph", "memory", "liveness", "programs", "execution", "blocks", "debug")


@dataclass(frozen=True)
class RunSummary:
    index: int
    name: str
    program: int
    cycles: int
    seconds: float
    steps: int  # executed step instances


@dataclass(frozen=True)
class MemorySummary:
    total_including_gaps: int
    total_excluding_gaps: int
    capacity: int  # bytes per tile x tiles
    largest_tile: int
    largest_tile_bytes: int
    tiles_over_limit: int


@dataclass(frozen=True)
class ReportSummary:
    """A report at a glance; fields of damaged sections are None (see ``errors``)."""

    name: str  # the report folder's name
    program_name: str | None
    producer: str | None
    producer_version: str | None
    format_version: str
    out_of_memory: bool | None
    files: dict[str, int]  # file name -> bytes, for the report files present
    ipu_version: str | None = None
    num_ipus: int | None = None
    tiles_per_ipu: int | None = None
    num_tiles: int | None = None
    bytes_per_tile: int | None = None
    clock_hz: float | None = None
    memory: MemorySummary | None = None
    always_live_bytes: int | None = None
    peak_live_bytes: int | None = None  # always-live included
    peak_live_step: int | None = None
    peak_live_step_name: str | None = None
    runs: list[RunSummary] | None = None  # [] when the program never ran
    errors: dict[str, str] = field(default_factory=dict)  # section -> message

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return asdict(self)


def report_summary(report: Any, check_debug: bool = False) -> ReportSummary:
    """The summary of an open ``Report``. Decoding debug.cbor costs more than the rest of the
    summary, so its error is only listed when ``check_debug`` asks for it (or it was loaded)."""
    # The graph's columns (hundreds of thousands of variables) are not needed at a glance;
    # views that use them report a damaged graph section themselves.
    # Nor are the steps' costs (cycles per IPU, exchanges and compute per tile): the
    # programs section's steps are checked alone (profile.pop 1.4).
    sections = ["header", "target", "memory", "liveness", PROGRAM_STEPS, "execution"]
    if check_debug or report.debug_loaded:
        sections.append("debug")
    errors = {section: str(error) for section, error in report.load(sections).items()}

    def attempt(section: str, build: Any) -> Any:
        try:
            return build()
        except ReportError as error:
            errors.setdefault(section, str(error))
            return None

    header = attempt("header", lambda: report.header)
    target = attempt("target", lambda: report.target)
    memory = attempt("memory", lambda: _memory(report)) if target is not None else None
    liveness = attempt("liveness", lambda: _liveness(report))
    runs = attempt("execution", lambda: _runs(report)) if target is not None else None
    return ReportSummary(
        name=report.name,
        program_name=header.program_name if header else None,
        producer=header.producer if header else None,
        producer_version=header.producer_version if header else None,
        format_version=report.format_version,
        out_of_memory=header.out_of_memory if header else None,
        files=report.file_sizes(),
        ipu_version=target.version if target else None,
        num_ipus=target.num_ipus if target else None,
        tiles_per_ipu=target.tiles_per_ipu if target else None,
        num_tiles=target.num_tiles if target else None,
        bytes_per_tile=target.bytes_per_tile if target else None,
        clock_hz=target.clock_hz if target else None,
        memory=memory,
        always_live_bytes=liveness[0] if liveness else None,
        peak_live_bytes=liveness[1] if liveness else None,
        peak_live_step=liveness[2] if liveness else None,
        peak_live_step_name=liveness[3] if liveness else None,
        runs=runs,
        errors=errors,
    )


def _memory(report: Any) -> MemorySummary:
    table = memory_table(report)
    with_gaps = table.total(True)
    gaps = with_gaps - table.total(False)
    largest = int(np.argmax(with_gaps)) if with_gaps.size else 0
    return MemorySummary(
        total_including_gaps=int(with_gaps.sum()),
        total_excluding_gaps=int(with_gaps.sum() - gaps.sum()),
        capacity=table.bytes_per_tile * table.num_tiles,
        largest_tile=largest,
        largest_tile_bytes=int(with_gaps[largest]) if with_gaps.size else 0,
        tiles_over_limit=len(table.over_limit()),
    )


def _liveness(report: Any) -> tuple[int, int, int, str]:
    table = liveness_table(report)
    step = table.peak_step
    name = report.strings[int(table.step_name[step])] if step >= 0 else ""
    return table.always_live_bytes, table.peak_bytes, step, name


def _runs(report: Any) -> list[RunSummary]:
    totals = run_totals(report)
    return [
        RunSummary(
            i,
            totals.names[i],
            int(totals.program[i]),
            int(totals.cycles[i]),
            float(totals.seconds[i]),
            int(totals.steps[i]),
        )
        for i in range(len(totals))
    ]
