"""The ``pva``-style scripting API: ``openReport`` for profiles (libpva) and ``openTrace`` for
system traces (libpvti). Scripts written for Graphcore's libpva run with
``from profiler_core import pva`` in place of ``import pva``."""

from profiler_core.pva.programs import Program, ProgramType, ProgramVisitor
from profiler_core.pva.report import openReport
from profiler_core.pva.trace import openTrace

__all__ = ["Program", "ProgramType", "ProgramVisitor", "openReport", "openTrace"]
