"""The Summary view's content, computed from a report's sections.

Stand-in for the summary analysis that profiler_core will provide: each ``*_rows`` function
answers one group of the Summary page and can be swapped for that analysis one by one. A
group whose section is damaged says so instead of failing the page.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

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


def program_rows(report: Report) -> list[SummaryRow]:
    h = report.header
    created = dt.datetime.fromtimestamp(h.created_unix).strftime("%Y-%m-%d %H:%M:%S")
    rows = [
        SummaryRow("Program", h.program_name or "(unnamed)", "The engine program's name."),
        SummaryRow("Report folder", str(report.folder), "Where the report files are."),
        SummaryRow("Created", created, "When the engine wrote the report."),
        SummaryRow(
            "Producer",
            f"{h.producer} {h.producer_version}",
            "The tool and version that wrote the report.",
        ),
        SummaryRow(
            "Format version",
            f"{h.format_major}.{h.format_minor}",
            "The profile.pop format version (major.minor).",
        ),
    ]
    if h.out_of_memory:
        rows.append(
            SummaryRow(
                "Out of memory",
                "yes: the graph did not fit (report written with debug.allowOutOfMemory)",
                "At least one tile needs more memory than it has.",
                warning=True,
            )
        )
    return rows


def target_rows(report: Report) -> list[SummaryRow]:
    t = report.target
    return [
        SummaryRow("IPU version", t.version, "The IPU architecture the program was compiled for."),
        SummaryRow("IPUs", format_count(t.num_ipus), "Number of IPUs the program runs on."),
        SummaryRow("Tiles per IPU", format_count(t.tiles_per_ipu), "Tiles on each IPU."),
        SummaryRow("Total tiles", format_count(t.num_tiles), "Tiles on all IPUs."),
        SummaryRow(
            "Memory per tile",
            format_bytes(t.bytes_per_tile, exact=True),
            "In-processor memory of one tile: the limit each tile must fit in.",
        ),
        SummaryRow(
            "Total memory",
            format_bytes(t.bytes_per_tile * t.num_tiles),
            "Memory of all tiles together.",
        ),
        SummaryRow("Clock", f"{t.clock_hz / 1e6:,.0f} MHz", "Tile clock frequency."),
    ]


def memory_rows(report: Report) -> list[SummaryRow]:
    table = memory_table(report)
    capacity = table.bytes_per_tile * table.num_tiles
    with_gaps, without_gaps = table.total(True), table.total(False)
    total = int(with_gaps.sum())
    largest = int(np.argmax(with_gaps)) if with_gaps.size else 0
    over = table.over_limit()
    over_text = format_count(over.size)
    if over.size:
        over_text += " (first: tile " + ", ".join(map(str, over[:5].tolist())) + ")"
    return [
        SummaryRow(
            "Total memory used",
            f"{format_bytes(total, exact=True)}, {format_percent(100 * total / capacity)} "
            "of capacity",
            "All categories on all tiles, gaps included, against the memory of all tiles.",
        ),
        SummaryRow(
            "Excluding gaps",
            format_bytes(int(without_gaps.sum()), exact=True),
            "The same total without alignment and memory-region gaps.",
        ),
        SummaryRow(
            "Largest tile",
            f"tile {largest}: {format_bytes(int(with_gaps[largest]))}, "
            f"{format_percent(100 * with_gaps[largest] / table.bytes_per_tile)} of the tile",
            "The tile using the most memory, gaps included.",
        ),
        SummaryRow(
            "Tiles over the limit",
            over_text,
            "Tiles whose memory, gaps included, is more than a tile has. Any such tile "
            "means the program does not fit.",
            warning=bool(over.size),
        ),
    ]


def liveness_rows(report: Report) -> list[SummaryRow]:
    live = report.liveness
    rows = [
        SummaryRow(
            "Always-live memory",
            format_bytes(live.always_live_bytes, exact=True),
            "Variables live for the whole program, on all tiles.",
        )
    ]
    if live.step_live_bytes.size:
        step = int(np.argmax(live.step_live_bytes))
        peak = int(live.step_live_bytes[step])
        name = report.graph.strings[int(report.programs.step_name[step])]
        rows.append(
            SummaryRow(
                "Peak liveness",
                f"{format_bytes(live.always_live_bytes + peak, exact=True)} at step {step} "
                f"({name})",
                "Always-live memory plus the most not-always-live memory live at one "
                "program step, on all tiles.",
            )
        )
    return rows


def execution_rows(report: Report) -> list[SummaryRow]:
    execution = report.execution
    if execution is None or not execution.runs:
        return [SummaryRow("Runs", "none recorded", "The program was compiled but not run.")]
    clock = report.target.clock_hz
    rows = []
    for i, run in enumerate(execution.runs):
        seconds = run.total_cycles / clock
        rows.append(
            SummaryRow(
                f"Run {i} ({run.name})",
                f"{format_count(run.total_cycles)} cycles, {format_seconds(seconds)}",
                f"Cycles from the start of run {i} to the end of its last step, and the "
                f"time they take at {clock / 1e9:.2f} GHz.",
            )
        )
    return rows


def file_rows(report: Report) -> list[SummaryRow]:
    rows = []
    for path in report.files:
        try:
            size = format_bytes(path.stat().st_size, exact=True)
        except OSError as error:
            size = f"unreadable: {error.strerror}"
        rows.append(SummaryRow(path.name, size, str(path)))
    if report.debug_path is None:
        rows.append(
            SummaryRow(
                "debug.cbor",
                "absent: no debug contexts for variables",
                "Written with autoReport.outputDebugInfo.",
            )
        )
    return rows


GROUPS: list[tuple[str, Callable[[Report], list[SummaryRow]], tuple[str, ...]]] = [
    ("Program", program_rows, ()),
    ("Target", target_rows, ("target",)),
    ("Memory", memory_rows, ("target", "memory")),
    ("Liveness", liveness_rows, ("liveness", "programs", "graph")),
    ("Execution", execution_rows, ("execution", "target")),
    ("Report files", file_rows, ()),
]


def summary_sections(opened: OpenedReport) -> list[SummarySection]:
    """Every group of the Summary page, in order."""
    sections = []
    for title, rows_of, needs in GROUPS:
        error = opened.missing(*needs)
        if error is None:
            try:
                rows = rows_of(opened.report)
            except ReportError as caught:
                error = caught
        if error is not None:
            rows = [SummaryRow("Not available", str(error), "This section is damaged.", True)]
        sections.append(SummarySection(title, rows))
    if opened.errors:
        rows = [SummaryRow(s, str(e), "", True) for s, e in opened.errors.items()]
        sections.append(SummarySection("Damaged sections", rows))
    return sections
