"""The process's C heap, set for a long-lived window: few malloc arenas.

glibc gives each thread that allocates a heap arena of its own (up to eight per core). The
workers that open reports and compute pages are many short-lived threads, and what a closed
window freed stays spread, fragmented, over their arenas: resident memory crept up by ~0.2
MB a window, opened and closed 200 times, after the Python objects were all freed. Two
arenas keep freed memory where the next window reuses it. Elsewhere than glibc: nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process; whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
