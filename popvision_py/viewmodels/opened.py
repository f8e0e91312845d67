"""An opened report as the application holds it: the Report and what failed to load."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from popvision_py.viewmodels.selection import ReportSelection
from profiler_core.errors import ReportError
from profiler_core.report import Report

AFTER_PAINT = ("graph", "programs")
"""profile.pop sections the window decodes after its first paint (the graph's columns, the
program steps' costs): no first page needs them; a page that does decodes them itself."""

SECTION_TITLES = {
    "target": "target",
    "graph": "graph",
    "graph_counts": "graph's counts",
    "memory": "memory",
    "liveness": "liveness",
    "programs": "program tree",
    "program_steps": "program steps",
    "execution": "execution profile",
    "blocks": "lightweight profile (blocks)",
    "debug": "debug information (debug.cbor)",
}


@dataclass
class OpenedReport:
    """A loaded ``Report`` with the sections that could not be decoded, by section name,
    and the one selection every view of it shares."""

    report: Report
    errors: dict[str, ReportError] = field(default_factory=dict)
    seconds_to_load: float = 0.0
    selection: ReportSelection = field(default_factory=ReportSelection)
    label: str = ""  # the user's name for the report in a comparison ("" for the folder's)
    # The Summary page's sections (viewmodels/summary.py), made by the loader's worker so
    # the first paint after opening only builds widgets; None when not made.
    summary: list[Any] | None = field(default=None, repr=False, compare=False)
    # Comparisons with other opened reports, by id of the other (compare.pair_of): every
    # view of a comparison shares one, so each analysis runs once.
    comparisons: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.report.name

    @property
    def folder(self) -> Path:
        return self.report.folder

    def missing(self, *sections: str) -> ReportError | None:
        """The first error among ``sections``, or None when all of them loaded."""
        for section in sections:
            if section in self.errors:
                return self.errors[section]
            if section == "debug" and self.report.debug_loaded:  # decoded after opening
                error = self.report.section_error("debug")
                if error is not None:
                    return error
            if section in AFTER_PAINT:  # decoded after the first paint, or now if asked first
                error = self.report.section_error(section)
                if error is not None:
                    self.errors[section] = error
                    return error
        return None

    def missing_text(self, *sections: str) -> str:
        """A sentence a view shows in place of what it cannot draw ("" when nothing is missing)."""
        error = self.missing(*sections)
        if error is None:
            return ""
        section = next(s for s in sections if s in self.errors or self.missing(s) is error)
        return (
            f"The {SECTION_TITLES.get(section, section)} section of this report could not be "
            f"read, so this view cannot be shown.\n\n{error}"
        )

    def damaged_summary(self) -> str:
        """One line naming every damaged section ("" when the report is whole)."""
        if not self.errors:
            return ""
        names = ", ".join(SECTION_TITLES.get(s, s) for s in self.errors)
        return f"{self.name}: some sections could not be read ({names}); the other views work."


def opened_status(opened: list[OpenedReport]) -> str:
    """The status bar's line after opening: the damaged sections, else the time it took;
    then the files written before checksums, whose damage could not be detected."""
    damaged = " ".join(o.damaged_summary() for o in opened if o.errors)
    seconds = sum(o.seconds_to_load for o in opened)
    notes = [note for o in opened for note in o.report.notes()]
    text = damaged or f"Opened in {seconds:.2f} s."
    return " ".join([text, *(f"Note: {note}." for note in notes)])


def carry_selections(old: list[OpenedReport], new: list[OpenedReport]) -> None:
    """Reload (or opening a report again) keeps what was selected in it: the new
    OpenedReport of a folder starts with the old one's tiles, steps, operation, run and range."""
    by_folder = {str(o.folder): o.selection for o in old}
    for opened in new:
        before = by_folder.get(str(opened.folder))
        if before is None:
            continue
        after = opened.selection
        after.select_run(before.run)
        after.select_tiles(before.tiles)
        after.select_steps(before.steps)
        after.select_operation(before.operation, before.operation_steps, before.operation_group_by)
        after.select_range(before.cycle_range)
