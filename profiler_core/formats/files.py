"""Checks every reader makes before it opens a file a user named."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from profiler_core.errors import ReportError


def regular_file_size(path: Path) -> int:
    """The size of ``path``, refusing folders, FIFOs, sockets and devices before anything
    opens them (opening a FIFO waits for a writer forever). OSError propagates."""
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise ReportError(path, "cannot read: it is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise ReportError(path, "is not a regular file (a device, FIFO or socket)")
    return os.stat(path).st_size


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` (links followed) is a regular file, without opening it: False for a
    FIFO, socket, device, folder, dangling link or symlink loop."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
