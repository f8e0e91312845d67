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
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.graph_stats import graph_statistics
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
    options: dict[str, str] | None = None  # a filterable key/value table instead of rows


ARCHITECTURES = {
    "ipu1": "ipu1 (Mk1, GC2: 1,216 tiles x 256 KiB)",
    "ipu2": "ipu2 (Mk2, GC200: 1,472 tiles x 624 KiB)",
    "bow": "bow (Bow IPU: Mk2 tiles at 1.85 GHz)",
}
TARGET_TYPES = {
    "IPU Model": "IPU Model (simulated on the host)",
    "IPU": "IPU hardware",
    "": "not recorded (a profile.pop 1.0 report)",
}


def program_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    h = report.header
    created = dt.datetime.fromtimestamp(h.created_unix).strftime("%Y-%m-%d %H:%M:%S")
    rows = [
        SummaryRow("Program", s.program_name or "(unnamed)", "The engine program's name."),
        SummaryRow("Report folder", report.location, "Where the report files are."),
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
    target = report.target
    replicas = "not recorded: 1" if not target.replicas else format_count(target.replicas)
    return [
        SummaryRow(
            "Target type",
            TARGET_TYPES.get(target.type, target.type),
            "Real IPUs, or Poplar's IPU Model (an IPU simulated on the host, as this engine is).",
        ),
        SummaryRow(
            "IPU version", s.ipu_version, "The IPU architecture the program was compiled for."
        ),
        SummaryRow(
            "Architecture",
            ARCHITECTURES.get(str(s.ipu_version), str(s.ipu_version)),
            "The IPU generation and what each of its IPUs has.",
        ),
        SummaryRow("IPUs", format_count(s.num_ipus), "Number of IPUs the program runs on."),
        SummaryRow(
            "Replicas",
            replicas,
            "Copies of the program running side by side (data parallel), each on its own IPUs.",
        ),
        SummaryRow(
            "IPUs per replica",
            format_count(target.ipus_in_a_replica),
            "IPUs each replica runs on (the model's shards or pipeline stages).",
        ),
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
        SummaryRow(name, format_bytes(size, exact=True), f"{report.location}/{name}")
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


def graph_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    g = graph_statistics(report)
    edges = format_count(g.edges) if g.edges >= 0 else "not recorded (profile.pop 1.0)"
    return [
        SummaryRow("Variables", format_count(g.variables), "Tensors the graph allocates."),
        SummaryRow("Constants", format_count(g.constants), "Constant tensors stored on tiles."),
        SummaryRow("Vertices", format_count(g.vertices), "Codelet instances on all tiles."),
        SummaryRow("Edges", edges, "Connections from vertices to the tensors they read and write."),
        SummaryRow("Compute sets", format_count(g.compute_sets), "Sets of vertices run at once."),
        SummaryRow("Codelets", format_count(g.codelets), "Distinct vertex types."),
        SummaryRow("Programs", format_count(g.programs), "Engine programs (run by index)."),
        SummaryRow(
            "Program steps", format_count(g.program_steps), "Steps the programs lowered to."
        ),
    ]


def instrumentation_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    level = report.header.instrumentation or "not recorded (a profile.pop 1.0 report)"
    profile = "recorded" if s.runs else "not recorded (the program was not run, or it was off)"
    return [
        SummaryRow(
            "Instrumentation",
            level,
            "Which cycle counters the program carried: debug.instrument, or on for the "
            "execution profile (autoReport.outputExecutionProfile).",
        ),
        SummaryRow("Execution profile", profile, "Cycles of each program step of each run."),
    ]


def framework_rows(report: Report, s: ReportSummary) -> list[SummaryRow]:
    """What built the program, when its front end wrote it (none for the graph API)."""
    return [
        SummaryRow(key, value, "Written by the framework that built the program.")
        for key, value in report.header.framework.items()
    ]


Rows = Callable[[Report, ReportSummary], list[SummaryRow]]

GROUPS: list[tuple[str, Rows, tuple[str, ...]]] = [
    ("Program", program_rows, ()),
    ("Target", target_rows, ("target",)),
    ("Framework", framework_rows, ()),
    ("Graph", graph_rows, ("graph_counts", "program_steps")),
    ("Memory", memory_rows, ("target", "memory")),
    ("Liveness", liveness_rows, ("liveness", "program_steps")),
    ("Execution", execution_rows, ("execution", "target")),
    ("Instrumentation", instrumentation_rows, ()),
    ("Report files", file_rows, ()),
]
OPTIONS_TITLE = "Engine and compile options"


def options_table(options: list[dict[str, str]], names: list[str]) -> ColumnTable:
    """Option, then its value in each report ("" where a report does not have it)."""
    keys = sorted(set().union(*options)) if options else []
    columns = [Column("Option", keys, "The engine option's name (Poplar's).")]
    headers = [f"Value ({name})" for name in names] if len(options) > 1 else ["Value"]
    for header, values in zip(headers, options, strict=True):
        columns.append(Column(header, [values.get(k, "") for k in keys], "As given or defaulted."))
    return ColumnTable(columns)


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
        if rows:  # a group with nothing to say (no framework recorded) is left out
            sections.append(SummarySection(title, rows))
    options = opened.report.header.options if "header" not in summary.errors else {}
    sections.append(SummarySection(OPTIONS_TITLE, [], dict(sorted(options.items()))))
    if opened.errors:
        rows = [SummaryRow(s, str(e), "", True) for s, e in opened.errors.items()]
        sections.append(SummarySection("Damaged sections", rows))
    return sections
