"""The Summary view's content: profiler_core's report summary, as labelled rows with help.

Each ``*_rows`` function formats one group of the Summary page; a group whose section is
damaged says so instead of failing the page.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from popvision_py.viewmodels.format import (
    format_bytes,
    format_count,
    format_percent,
    format_seconds,
)
from popvision_py.viewmodels.opened import OpenedReport
from profiler_core.analysis.memory import memory_table
from profiler_core.errors import ReportError
from profiler_core.report import Report
from profiler_core.report.summary import ReportSummary, report_summary


@dataclass(frozen=True)
class SummaryRow:
    label: str
    value: str
    help: str = ""  # the tooltip: what the number means
    warning: bool = False  # shown highlighted (out of memory, damaged section)


@dataclass(frozen=True)
class SummarySection:
    title: str
    rows: list[SummaryRow]


def program_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    h = report.header
    created = dt.datetime.fromtimestamp(h.created_unix).strftime("%Y-%m-%d %H:%M:%S")
    rows = [
        SummaryRow("Program", s.program_name or "(unnamed)", "The engine program's name."),
        SummaryRow("Report folder", str(report.folder), "Where the report files are."),
        SummaryRow("Created", created, "When the engine wrote the report."),
        SummaryRow(
            "Producer",
            f"{s.producer} {s.producer_version}",
            "The tool and version that wrote the report.",
        ),
        SummaryRow(
            "Format version", s.format_version, "The profile.pop format version (major.minor)."
        ),
    ]
    if s.out_of_memory:
        rows.append(
            SummaryRow(
                "Out of memory",
                "yes: the graph did not fit (report written with debug.allowOutOfMemory)",
                "At least one tile needs more memory than it has.",
                warning=True,
            )
        )
    return rows


def target_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    return [
        SummaryRow(
            "IPU version", s.ipu_version, "The IPU architecture the program was compiled for."
        ),
        SummaryRow("IPUs", format_count(s.num_ipus), "Number of IPUs the program runs on."),
        SummaryRow("Tiles per IPU", format_count(s.tiles_per_ipu), "Tiles on each IPU."),
        SummaryRow("Total tiles", format_count(s.num_tiles), "Tiles on all IPUs."),
        SummaryRow(
            "Memory per tile",
            format_bytes(s.bytes_per_tile, exact=True),
            "In-processor memory of one tile: the limit each tile must fit in.",
        ),
        SummaryRow(
            "Total memory",
            format_bytes(s.bytes_per_tile * s.num_tiles),
            "Memory of all tiles together.",
        ),
        SummaryRow("Clock", f"{s.clock_hz / 1e6:,.0f} MHz", "Tile clock frequency."),
    ]


def memory_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    m = s.memory
    over_text = format_count(m.tiles_over_limit)
    if m.tiles_over_limit:
        over = memory_table(report).over_limit()
        over_text += " (first: tile " + ", ".join(map(str, over[:5].tolist())) + ")"
    return [
        SummaryRow(
            "Total memory used",
            f"{format_bytes(m.total_including_gaps, exact=True)}, "
            f"{format_percent(100 * m.total_including_gaps / m.capacity)} of capacity",
            "All categories on all tiles, gaps included, against the memory of all tiles.",
        ),
        SummaryRow(
            "Excluding gaps",
            format_bytes(m.total_excluding_gaps, exact=True),
            "The same total without alignment and memory-region gaps.",
        ),
        SummaryRow(
            "Largest tile",
            f"tile {m.largest_tile}: {format_bytes(m.largest_tile_bytes)}, "
            f"{format_percent(100 * m.largest_tile_bytes / s.bytes_per_tile)} of the tile",
            "The tile using the most memory, gaps included.",
        ),
        SummaryRow(
            "Tiles over the limit",
            over_text,
            "Tiles whose memory, gaps included, is more than a tile has. Any such tile "
            "means the program does not fit.",
            warning=bool(m.tiles_over_limit),
        ),
    ]


def liveness_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    rows = [
        SummaryRow(
            "Always-live memory",
            format_bytes(s.always_live_bytes, exact=True),
            "Variables live for the whole program, on all tiles.",
        )
    ]
    if s.peak_live_step is not None and s.peak_live_step >= 0:
        rows.append(
            SummaryRow(
                "Peak liveness",
                f"{format_bytes(s.peak_live_bytes, exact=True)} at step {s.peak_live_step} "
                f"({s.peak_live_step_name})",
                "Always-live memory plus the most not-always-live memory live at one "
                "program step, on all tiles.",
            )
        )
    return rows


def execution_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    if not s.runs:
        return [SummaryRow("Runs", "none recorded", "The program was compiled but not run.")]
    clock = s.clock_hz
    return [
        SummaryRow(
            f"Run {run.index} ({run.name})",
            f"{format_count(run.cycles)} cycles, {format_seconds(run.seconds)}",
            f"Cycles from the start of run {run.index} to the end of its last step, and "
            f"the time they take at {clock / 1e9:.2f} GHz.",
        )
        for run in s.runs
    ]


def file_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    rows = [
        SummaryRow(name, format_bytes(size, exact=True), str(report.folder / name))
        for name, size in s.files.items()
    ]
    if report.debug_path is None:
        rows.append(
            SummaryRow(
                "debug.cbor",
                "absent: no debug contexts for variables",
                "Written with autoReport.outputDebugInfo.",
            )
        )
    return rows


Rows = Callable[[Report, ReportSummary], list[SummaryRow]]

GROUPS: list[tuple[str, Rows, tuple[str, ...]]] = [
    ("Program", program_rows, ()),
    ("Target", target_rows, ("target",)),
    ("Memory", memory_rows, ("target", "memory")),
    ("Liveness", liveness_rows, ("liveness", "programs", "graph")),
    ("Execution", execution_rows, ("execution", "target")),
    ("Report files", file_rows, ()),
]


def summary_sections(opened: OpenedReport) -> list[SummarySection]:
    """Every group of the Summary page, in order, from profiler_core's report summary."""
    summary = report_summary(opened.report)
    sections = []
    for title, rows_of, needs in GROUPS:
        error: ReportError | str | None = opened.missing(*needs)
        if error is None:
            error = next((summary.errors[n] for n in needs if n in summary.errors), None)
        if error is None:
            rows = rows_of(opened.report, summary)
        else:
            rows = [SummaryRow("Not available", str(error), "This section is damaged.", True)]
        sections.append(SummarySection(title, rows))
    if opened.errors:
        rows = [SummaryRow(s, str(e), "", True) for s, e in opened.errors.items()]
        sections.append(SummarySection("Damaged sections", rows))
    return sections
