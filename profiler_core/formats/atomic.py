"""Atomic file writes: a report file is either its old complete self or the new complete one.

The content goes to a temporary file beside the target, is flushed and fsynced, then renamed
over the target with ``os.replace``, so a crash or an error mid-way never leaves half a file
under the final name. The temporary file is locked while it is written; one whose lock is
free was left by a writer that died (kill -9, power loss), and the next write removes it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from profiler_core.errors import ReportError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; abandoned temporary files stay
    fcntl = None  # type: ignore[assignment]

_TEMP_SUFFIX = ".tmp"


def temp_name_for(path: Path) -> str:
    """A fresh hidden name beside ``path``: ``.profile.pop.3f9a1c2e7b4d.tmp``."""
    return f".{path.name}.{secrets.token_hex(6)}{_TEMP_SUFFIX}"


def atomic_write(path: str | Path, write: Callable[[BinaryIO], None]) -> None:
    """Call ``write(file)`` on a temporary file, then move it onto ``path`` in one step.

    An OS problem (missing or read-only directory, full disk) raises ``ReportError`` naming
    ``path`` and the reason; any other exception from ``write`` propagates unchanged. In both
    cases the temporary file is removed and an existing ``path`` is left untouched.
    """
    path = Path(path)
    _remove_abandoned_temps(path)
    try:
        fd, temp = _create_temp(path)
    except OSError as error:
        raise ReportError(path, f"cannot write: {_reason(error)}") from error
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except OSError as error:
        _remove_quietly(temp)
        raise ReportError(path, f"cannot write: {_reason(error)}") from error
    except BaseException:
        # Also on KeyboardInterrupt: never leave a stray temporary file behind.
        _remove_quietly(temp)
        raise
    _sync_directory(path.parent)


def _create_temp(path: Path) -> tuple[int, Path]:
    # os.open with mode 0o666 lets the umask decide the final permissions, as for a plain
    # open(); tempfile.mkstemp would leave every report readable by its owner only.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temp = path.parent / temp_name_for(path)
        try:
            fd = os.open(temp, flags, 0o666)
        except FileExistsError:
            continue
        _lock(fd)
        return fd, temp
    raise FileExistsError(f"no free temporary name beside {path.name}")


def _lock(fd: int) -> bool:
    """Take the temporary file's lock without waiting; False when another process has it.
    The lock goes with the process, so a killed writer's temporary file is free."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _remove_abandoned_temps(path: Path) -> None:
    """Remove temporary files of ``path`` whose writer is gone (their lock is free)."""
    if fcntl is None:
        return
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.*{_TEMP_SUFFIX}"))
    except OSError:
        return
    for temp in candidates:
        try:
            fd = os.open(temp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode) and _lock(fd):
                _remove_quietly(temp)
        finally:
            os.close(fd)


def _remove_quietly(temp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(temp)


def _sync_directory(directory: Path) -> None:
    # Makes the rename itself durable. Not possible on Windows nor on every file system;
    # the file's content is already safe either way.
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__
