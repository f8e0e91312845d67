"""The pvti API's error: a malformed PVTI_OPTIONS value or enable() argument."""

from __future__ import annotations

from ipu_engine.errors import OptionError


class PvtiOptionsError(OptionError, ValueError):
    """PVTI_OPTIONS (or an ``enable()`` argument) is malformed; the message names the key."""
