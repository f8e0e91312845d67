"""The ``pva``-style scripting API: ``openReport`` for profiles (libpva) and ``openTrace`` for
system traces (libpvti). Scripts written for Graphcore's libpva run with
``from profiler_core import pva`` in place of ``import pva``; what libpva has and we do not
model raises AttributeError naming the nearest covered attribute (profiler_core/README.md
lists the coverage)."""

from profiler_core.pva.compilation import IPU
from profiler_core.pva.operations import OperationAnalysis
from profiler_core.pva.programs import Program, ProgramType, ProgramVisitor
from profiler_core.pva.report import InstrumentationLevel, openReport
from profiler_core.pva.trace import Event, PartialTraceWarning, openTrace

__all__ = [
    "IPU",
    "Event",
    "InstrumentationLevel",
    "OperationAnalysis",
    "PartialTraceWarning",
    "Program",
    "ProgramType",
    "ProgramVisitor",
    "openReport",
    "openTrace",
]
