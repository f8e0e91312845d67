"""The project's C modules (setup.py), imported by name: a checkout whose modules were
never built says how to build them, rather than Python's bare "No module named" or a
slower path taken silently. There is no Python fallback for any of them."""

from __future__ import annotations

import importlib
from types import ModuleType


def native_module(name: str, what: str) -> ModuleType:
    """The C module ``name``; ``what`` names it for the message ("the tracepoints are a C
    module")."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # a checkout whose C modules were never built
        raise ImportError(
            f"{exc}: {what} built by `pip install -e .` in the checkout (`make run` and "
            "`make test` do it; a C compiler and Python's headers are needed)"
        ) from exc
