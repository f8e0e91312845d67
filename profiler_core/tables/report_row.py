"""A report's row of the ``reports`` table: its summary (``report_summary``, what the Summary
page and ``popvision-cli summary`` show) as one row, with what makes it partial in
``warnings`` and why it could not be read at all in ``error``."""

from __future__ import annotations

from typing import Any

from profiler_core.errors import ReportError
from profiler_core.report import Report
from profiler_core.tables.sources import ReportSource


def report_row(source: ReportSource, report: Report | None, error: str = "") -> dict[str, Any]:
    """The row of ``source``: from ``report`` when it opened, else ``error`` says why not."""
    row: dict[str, Any] = {"path": None if source.path is None else str(source.path)}
    warnings = [f"the run failed: {source.run_error}"] if source.run_error else []
    if report is None:
        row["error"] = error or source.run_error or "no report"
        row["warnings"] = "; ".join(warnings)
        return row
    s = report.summary(check_debug=True)
    warnings += [f"{section}: {message}" for section, message in s.errors.items()]
    warnings += [w for w in report.warnings() if w not in s.errors.values()]
    row |= {
        "program": s.program_name,
        "producer": s.producer,
        "format_version": s.format_version,
        "ipu_version": s.ipu_version,
        "num_ipus": s.num_ipus,
        "tiles_per_ipu": s.tiles_per_ipu,
        "num_tiles": s.num_tiles,
        "bytes_per_tile": s.bytes_per_tile,
        "clock_hz": s.clock_hz,
        "out_of_memory": s.out_of_memory,
        "always_live_bytes": s.always_live_bytes,
        "peak_live_bytes": s.peak_live_bytes,
        "peak_live_step": s.peak_live_step,
        "peak_live_step_name": s.peak_live_step_name,
        "warnings": "; ".join(warnings),
    }
    m = s.memory
    if m is not None:
        row |= {
            "total_memory_bytes": m.total_including_gaps,
            "total_memory_excluding_gaps": m.total_excluding_gaps,
            "capacity_bytes": m.capacity,
            "fullest_tile": m.largest_tile,
            "fullest_tile_bytes": m.largest_tile_bytes,
            "tiles_over": m.tiles_over_limit,
            "fits": m.tiles_over_limit == 0 and not s.out_of_memory,
        }
    if s.runs is not None:
        row |= {
            "num_runs": len(s.runs),
            "total_cycles": sum(r.cycles for r in s.runs),
            "total_microseconds": round(sum(r.seconds for r in s.runs) * 1e6, 3),
        }
    return row


def open_error(error: Exception) -> str:
    """A report that could not be opened, in the words its error uses."""
    if isinstance(error, ReportError):
        return str(error)
    return f"could not be read ({type(error).__name__}: {error})"
