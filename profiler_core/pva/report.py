"""``openReport``: a report opened for scripts written for Graphcore's libpva, so that
``import pva`` becomes ``from profiler_core import pva`` and the rest runs unchanged.

Objects are made from the report's columns when a script touches them; the columns are
decoded and derived once per report (see ``columns.py``).
"""

from __future__ import annotations

import enum
import re
from functools import cached_property
from pathlib import Path

from profiler_core.pva import lazy
from profiler_core.pva.columns import ReportColumns
from profiler_core.pva.compilation import Compilation
from profiler_core.pva.execution import Execution
from profiler_core.pva.unmodelled import PvaObject
from profiler_core.report import Report as CoreReport
from profiler_core.report import open_report


class PoplarVersion(PvaObject):
    """The engine that wrote the report: ``string`` ("0.1.0 (ipu_engine)"), major/minor/point
    from its version, ``packageHash`` the producer's name (the engine has no package hash)."""

    def __init__(self, producer: str, version: str) -> None:
        numbers = [int(n) for n in re.findall(r"\d+", version)[:3]] + [0, 0, 0]
        self.major, self.minor, self.point = numbers[:3]
        self.packageHash = producer
        self.string = f"{version} ({producer})"


class ProfileReportVersion(PvaObject):
    """The profile.pop format version; a format this reader knows is never unstable."""

    def __init__(self, major: int, minor: int) -> None:
        self.major, self.minor, self.point = major, minor, 0
        self.isUnstableFormat = False


class InstrumentationLevel(enum.Enum):
    """Where cycle counters were kept (Poplar's ``debug.*InstrumentationLevel`` values)."""

    Off = "off"
    Device = "device"
    Ipu = "ipu"
    Tile = "tile"
    Vertex = "vertex"


def _on(value: str | None) -> bool:
    return str(value).lower() == "true"


class InstrumentationSettings(PvaObject):
    """What the program was instrumented with, from the engine options the report records:
    instrumentation is on with ``debug.instrument`` or an execution profile
    (``autoReport.all`` / ``autoReport.outputExecutionProfile``); ``debug.instrumentCompute``
    / ``debug.instrumentExternalExchange`` "false" turn one part off; the levels are
    ``debug.computeInstrumentationLevel`` / ``debug.externalExchangeInstrumentationLevel``
    (default "tile", which is what the engine keeps counters for)."""

    def __init__(self, options: dict[str, str], description: str) -> None:
        on = (
            _on(options.get("debug.instrument"))
            or _on(options.get("autoReport.all"))
            or _on(options.get("autoReport.outputExecutionProfile"))
        )
        self.description = description  # the report's own words, when it records them
        self.computeInstrumentationLevel = self._level(
            on, options, "debug.instrumentCompute", "debug.computeInstrumentationLevel"
        )
        self.externalExchangeInstrumentationLevel = self._level(
            on,
            options,
            "debug.instrumentExternalExchange",
            "debug.externalExchangeInstrumentationLevel",
        )

    @staticmethod
    def _level(on: bool, options: dict[str, str], switch: str, level: str) -> InstrumentationLevel:
        if not on or str(options.get(switch, "")).lower() == "false":
            return InstrumentationLevel.Off
        return InstrumentationLevel(str(options.get(level, "tile")).lower())

    @property
    def instrumentCompute(self) -> bool:
        return self.computeInstrumentationLevel is not InstrumentationLevel.Off

    @property
    def instrumentExternalExchange(self) -> bool:
        return self.externalExchangeInstrumentationLevel is not InstrumentationLevel.Off


class Report(PvaObject):
    """``compilation``, ``execution``, ``poplarVersion``, ``version``,
    ``instrumentationSettings``; ``columns`` is the profiler_core Report underneath."""

    def __init__(self, report: CoreReport) -> None:
        self.columns = report
        self._derived = ReportColumns(report)

    @property
    def warnings(self) -> list[str]:
        """What makes this report partial ([] for a whole one): a debug.cbor of another run
        ("incomplete report"), or one that cannot be read -- as every CLI command says."""
        return self.columns.warnings()

    @property
    def notes(self) -> list[str]:
        """What to know that does not make the report partial: its files written before
        checksums, so damage to them cannot be detected -- as the CLI's ``note:`` lines."""
        return self.columns.notes()

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

    @cached_property
    def instrumentationSettings(self) -> InstrumentationSettings:
        header = self.columns.header
        return InstrumentationSettings(header.options, getattr(header, "instrumentation", ""))

    @staticmethod
    def listPrintLength(length: int) -> None:
        """How many items printing a list shows (for every report, as in libpva)."""
        lazy.PRINT_LENGTH[0] = int(length)

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
