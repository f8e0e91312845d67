"""The process's C heap (glibc's malloc), asked to keep its footprint near what is in use.

- ``release_free_memory``: reading a big trace frees millions of parsed objects and many
  numpy temporaries of a few MB. glibc keeps such blocks for reuse, so the process would
  stay as big as its peak and the next stage's peak would stack on what the last one left:
  the importer hands the free pages back (``malloc_trim``) after each stage.
- ``limit_malloc_arenas``: glibc gives each thread that allocates an arena of its own (up
  to eight per core). The window's workers that open reports and compute pages are many
  short-lived threads, and what a closed window freed stayed fragmented over their arenas:
  resident memory crept up ~0.2 MB a window over 200 opened and closed. Two arenas keep
  freed memory where the next window reuses it.

Elsewhere than glibc (macOS, musl) both do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from functools import cache
from typing import Any

M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2


@cache
def _glibc() -> Any | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def release_free_memory() -> bool:
    """Return the heap's free pages to the system; whether it could be asked."""
    libc = _glibc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process; whether it was set."""
    libc = _glibc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(M_ARENA_MAX, arenas))
