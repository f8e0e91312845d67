"""``openReport``: a report opened for scripts written for Graphcore's libpva, so that
``import pva`` becomes ``from profiler_core import pva`` and the rest runs unchanged.

Objects are made from the report's columns when a script touches them; the columns are
decoded and derived once per report (see ``columns.py``).
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from profiler_core.pva.columns import ReportColumns
from profiler_core.pva.compilation import Compilation
from profiler_core.pva.execution import Execution
from profiler_core.report import Report as CoreReport
from profiler_core.report import open_report


class PoplarVersion:
    """The engine that wrote the report: ``string`` ("0.1.0 (ipu_engine)"), major/minor/point."""

    def __init__(self, producer: str, version: str) -> None:
        numbers = [int(n) for n in re.findall(r"\d+", version)[:3]] + [0, 0, 0]
        self.major, self.minor, self.point = numbers[:3]
        self.packageHash = producer
        self.string = f"{version} ({producer})"


class ProfileReportVersion:
    def __init__(self, major: int, minor: int) -> None:
        self.major, self.minor, self.point = major, minor, 0
        self.isUnstableFormat = False


class Report:
    """``compilation``, ``execution``, ``poplarVersion``, ``version``; ``columns`` is the
    profiler_core Report underneath, for numpy access."""

    def __init__(self, report: CoreReport) -> None:
        self.columns = report
        self._derived = ReportColumns(report)

    @cached_property
    def compilation(self) -> Compilation:
        return Compilation(self._derived)

    @cached_property
    def execution(self) -> Execution:
        return Execution(self._derived)

    @cached_property
    def poplarVersion(self) -> PoplarVersion:
        header = self.columns.header
        return PoplarVersion(header.producer, header.producer_version)

    @cached_property
    def version(self) -> ProfileReportVersion:
        header = self.columns.header
        return ProfileReportVersion(header.format_major, header.format_minor)

    def close(self) -> None:
        self.columns.close()

    def __enter__(self) -> Report:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def openReport(profile_path: str | Path, debug_path: str | Path | None = None) -> Report:
    """Open ``profile.pop`` (or its folder); ``debug_path`` names a debug.cbor elsewhere."""
    report = open_report(profile_path)
    if debug_path is not None:
        report = CoreReport(report.folder, report.profile_path, Path(debug_path))
    return Report(report)
