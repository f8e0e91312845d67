"""The pvti API's error (a malformed PVTI_OPTIONS value or enable() argument) and its warning
(the trace cannot be written; the traced program goes on)."""

from __future__ import annotations

from ipu_engine.common.errors import EngineError, OptionError


class PvtiOptionsError(OptionError, ValueError):
    """PVTI_OPTIONS (or an ``enable()`` argument) is malformed; the message names the key."""


class InstrumentError(EngineError, AttributeError):
    """``instrument`` was asked for a method the object does not have (an AttributeError
    too, as Python's own)."""


class MetricError(EngineError, ValueError):
    """A heatmap or series declared with values it cannot hold (edges not increasing
    numbers...); a ValueError too, as before."""


class PvtiWriteWarning(UserWarning):
    """The trace file cannot be created or written; the program runs on untraced."""
