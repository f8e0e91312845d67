"""The ``pva``-style scripting API: ``openTrace`` (and, later, ``openReport``)."""

from profiler_core.pva.trace import openTrace

__all__ = ["openTrace"]
