"""The memory table of a report, checked against its target before any view uses it.

The profile.pop reader checks each section on its own; that memory has one row per
category and one column per tile of the target is a cross-section fact the views check here.
"""

from __future__ import annotations

from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.errors import ReportError
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import Report


def checked_memory_table(report: Report) -> MemoryTable:
    """``memory_table(report)``, or ReportError when its shape disagrees with the target."""
    table = memory_table(report)
    categories, tiles = table.by_category.shape
    expected = report.target.num_tiles
    if categories != len(MemoryCategory) or tiles != expected or expected == 0:
        raise ReportError(
            report.profile_path,
            f"section 'memory': {categories} categories x {tiles} tiles, but the target has "
            f"{len(MemoryCategory)} categories x {expected} tiles",
        )
    return table
