"""Freed memory handed back to the system while a big trace is read.

Reading a trace frees millions of parsed objects and many numpy temporaries of a few MB.
glibc keeps such blocks in its heap for reuse, so the process would stay as big as its
peak -- and the next stage's peak would stack on top of what the last one left. After
each stage the importer asks glibc (``malloc_trim``) to return the free pages; elsewhere
(macOS, musl) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from collections.abc import Callable
from functools import cache


@cache
def _trim() -> Callable[[int], int] | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> bool:
    """Return the heap's free pages to the system; whether it could be asked."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
