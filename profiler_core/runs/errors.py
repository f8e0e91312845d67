"""The sweep's errors: members of profiler_core's one family (``ReportError``), so every
command prints them the same way -- one line naming what is wrong and what to do."""

from __future__ import annotations

from pathlib import Path

from profiler_core.errors import ReportError


class SweepError(ReportError):
    """A sweep that cannot start or go on: a command not found, too many runs, a scheduler
    that does not answer, an ``--out`` that holds another sweep."""

    def __init__(self, problem: str, path: str | Path | None = None) -> None:
        super().__init__(path, problem)
