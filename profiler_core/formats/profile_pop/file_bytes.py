"""The bytes of an open ``profile.pop``, held so that a section nobody has asked for costs no
memory: its arrays' pages are given back to the system after the file is read, and read
again from the still-open file when the section is first decoded.

A command that reads the graph alone (``memory --variables``) then holds the graph, not the
programs, liveness and runs beside it. The file stays open, so a report written again in the
meantime (the writers replace the file, never rewrite it in place) is not seen; a file cut or
rewritten in place since it was opened raises ``ReportError`` for the section that needed it.
The bytes live in anonymous memory, not a mapping of the file, so a file cut while open can
never take the process down (a mapped file cut short raises SIGBUS on the next read).
"""

from __future__ import annotations

import mmap
import os
import threading
import weakref
from pathlib import Path
from typing import BinaryIO

from profiler_core.errors import ReportError

_PAGE = mmap.PAGESIZE
_CAN_RELEASE = hasattr(mmap, "MADV_DONTNEED")


class FileBytes:
    """Every byte of one file in memory (``data``); ``release`` / ``restore`` page ranges
    when made ``releasable``."""

    def __init__(self, path: Path, file: BinaryIO, size: int, releasable: bool) -> None:
        """Read ``size`` bytes of ``file`` (unbuffered, at offset 0), which this object keeps
        open and closes when it is dropped. Unless ``releasable`` the bytes are one ``bytes``
        (the quicker read: no page is given back, so none is read twice)."""
        self.path = path
        self._fd = file.fileno()
        self._close = weakref.finalize(self, file.close)
        self._released: dict[str, list[tuple[int, int]]] = {}
        self._lock = threading.Lock()
        self.releasable = releasable and _CAN_RELEASE
        if not self.releasable:
            self.data: bytes | mmap.mmap = file.read()
            if len(self.data) != size:
                raise ReportError(path, f"cut short while being read: {len(self.data)} of {size}")
            return
        self.data = mmap.mmap(-1, size)  # zero pages cost nothing until written
        view = memoryview(self.data)
        done = 0
        while done < size:
            count = file.readinto(view[done:])
            if not count:
                raise ReportError(path, f"cut short while being read: {done} of {size} bytes")
            done += count
        view.release()

    def release(self, section: str, spans: list[tuple[int, int]]) -> None:
        """Give back the whole pages inside ``spans`` ((offset, length) of a section's arrays)
        until ``restore(section)``; reading them meanwhile gives zeros."""
        if not self.releasable:
            return
        ranges = []
        for start, length in spans:
            first = -(-start // _PAGE) * _PAGE  # whole pages only: the bytes around an
            last = (start + length) // _PAGE * _PAGE  # array (its struct) stay in memory
            if last > first:
                self.data.madvise(mmap.MADV_DONTNEED, first, last - first)
                ranges.append((first, last))
        if ranges:
            self._released.setdefault(section, []).extend(ranges)

    def restore(self, section: str) -> None:
        """Read the released pages of ``section`` again from the open file."""
        with self._lock:
            ranges = self._released.pop(section, None)
            if not ranges:
                return
            view = memoryview(self.data)
            try:
                for first, last in ranges:
                    done = first
                    while done < last:
                        count = os.preadv(self._fd, [view[done:last]], done)
                        if not count:
                            raise ReportError(
                                self.path,
                                f"was cut to {done} bytes since it was opened; open the "
                                "report again",
                            )
                        done += count
            except OSError as error:
                raise ReportError(self.path, f"cannot read: {error.strerror or error}") from error
            finally:
                view.release()

    def close(self) -> None:
        """Close the file. The bytes stay while arrays made from them are in use."""
        self._close()
        self._released.clear()
