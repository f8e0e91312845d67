"""``popvision-cli summary``: the report at a glance, as key/value lines and a table of runs."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table
from profiler_core.report import Report
from profiler_core.report.summary import ReportSummary


def summary(report: Report, args: argparse.Namespace) -> Output:
    s = report.summary(check_debug=True)
    runs = s.runs or []
    table = Table(
        "runs",
        {
            "run": [r.index for r in runs],
            "name": [r.name for r in runs],
            "program": [r.program for r in runs],
            "cycles": [r.cycles for r in runs],
            "microseconds": [round(r.seconds * 1e6, 3) for r in runs],
            "steps": [r.steps for r in runs],
        },
    )
    document = s.to_dict()
    return Output(
        [table] if runs else [],
        header=_header_lines(s),
        document=document,
        csv_table=_key_values(document),
        warnings=list(s.errors.values()),  # damaged sections: what is shown is partial
    )


def _header_lines(s: ReportSummary) -> list[tuple[str, str]]:
    lines = [
        ("Report", s.name),
        ("Program", s.program_name or "(unknown)"),
        ("Producer", f"{s.producer} {s.producer_version} (profile format {s.format_version})"),
        ("Files", ", ".join(f"{name} ({size:,} bytes)" for name, size in s.files.items())),
    ]
    if s.num_tiles is not None:
        lines += [
            ("Target", f"{s.ipu_version}, {s.num_ipus} IPU(s) x {s.tiles_per_ipu:,} tiles"),
            ("Tiles", f"{s.num_tiles:,}"),
            ("Memory per tile", f"{s.bytes_per_tile:,} bytes"),
            ("Clock", f"{s.clock_hz / 1e6:,.0f} MHz"),
        ]
    m = s.memory
    if m is not None:
        share = 100.0 * m.total_including_gaps / max(m.capacity, 1)
        lines += [
            ("Total memory", f"{m.total_including_gaps:,} bytes ({share:.2f}% of {m.capacity:,})"),
            ("Total memory, excluding gaps", f"{m.total_excluding_gaps:,} bytes"),
            ("Largest tile", f"tile {m.largest_tile}, {m.largest_tile_bytes:,} bytes"),
            ("Tiles over the limit", f"{m.tiles_over_limit:,}"),
        ]
    if s.out_of_memory is not None:
        lines.append(("Out of memory", "yes" if s.out_of_memory else "no"))
    if s.peak_live_bytes is not None:
        lines += [
            ("Always-live memory", f"{s.always_live_bytes:,} bytes"),
            (
                "Peak live memory",
                f"{s.peak_live_bytes:,} bytes at step {s.peak_live_step} ({s.peak_live_step_name})",
            ),
        ]
    if s.runs is not None:
        cycles = sum(r.cycles for r in s.runs)
        seconds = sum(r.seconds for r in s.runs)
        lines.append(("Cycles", f"{cycles:,} in {len(s.runs)} run(s), {seconds * 1e6:,.3f} us"))
    lines += [(f"Error in {section}", message) for section, message in s.errors.items()]
    return lines


def _key_values(document: dict[str, Any]) -> Table:
    """The summary flattened to ``key,value`` rows (``memory.total_including_gaps``, ...)."""
    keys: list[str] = []
    values: list[Any] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                walk(f"{prefix}.{i}", inner)
        else:
            keys.append(prefix)
            values.append(value.item() if isinstance(value, np.generic) else value)

    walk("", document)
    return Table("summary", {"key": keys, "value": values})
