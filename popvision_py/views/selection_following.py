"""A page that follows the selection of the report it shows, and of no other: what the
Operations and Operations Graph pages share. ``follow_selection`` connects the page's
``_on_selection_changed`` to a report's selection (letting go of the one before), and
showing other reports or clearing the page lets go."""

from __future__ import annotations

from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.selection import ReportSelection


class FollowsSelection:
    """Mixed into a ``ReportView`` before it: the page defines ``_on_selection_changed``."""

    _followed: ReportSelection | None = None

    def follow_selection(self, selection: ReportSelection) -> None:
        self.unfollow_selection()
        selection.changed.connect(self._on_selection_changed)  # type: ignore[attr-defined]
        self._followed = selection

    def unfollow_selection(self) -> None:
        if self._followed is not None:
            self._followed.changed.disconnect(self._on_selection_changed)  # type: ignore[attr-defined]
            self._followed = None

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        self.unfollow_selection()
        super().show_reports(opened, other)  # type: ignore[misc]

    def clear(self) -> None:
        self.unfollow_selection()
        super().clear()  # type: ignore[misc]
