"""The temporary copy through which a truncated .pvti is read, bounded by the file's own size.

A truncated file's header may claim any number of pages (2^24 pages of 64 KiB is a terabyte);
the copy holds the file's whole pages and at most as many again of invalid padding, and its
header is rewritten to the copy's page count, so SQLite finds any page past it out of range
(corrupt) rather than reading zeros. Copies are named ``salvage-<pid>-*.pvti``: each is
removed on every path out of ``salvage_copy``'s caller, and the first salvage of a process
sweeps the copies left by processes that died holding one.
"""

from __future__ import annotations

import contextlib
import os
import re
import struct
import tempfile
from pathlib import Path
from typing import BinaryIO

from profiler_core.errors import ReportError

HEADER_SIZE = 100
PREFIX = "salvage-"
_COPY_NAME = re.compile(rf"{PREFIX}(\d+)-.*\.pvti")
_swept = False


def page_size_of(head: bytes) -> int:
    """The page size in a SQLite header (the value 1 means 65,536)."""
    (page_size,) = struct.unpack(">H", head[16:18])
    return 65536 if page_size == 1 else page_size


def salvage_copy(path: Path) -> Path:
    """A temporary copy of truncated ``path``: its whole pages, then 0xFF bytes for missing
    pages up to the header's page count, but never more padding than the pages copied (the
    last, partial page counts as missing).

    0xFF pages are invalid wherever SQLite meets them (a b-tree page of type 0xFF, an
    overflow chain pointing past the file), so a row using a missing page fails as
    corrupt. Zeros would not do: a zeroed last overflow page ends its chain cleanly and
    would pass off zeros as the row's values. The caller removes the copy; a copy that
    cannot be written (a full disk, a file-size limit) is removed here and raises
    ``ReportError`` naming ``path``.
    """
    sweep_stale_copies()
    fd, name = tempfile.mkstemp(suffix=".pvti", prefix=f"{PREFIX}{os.getpid()}-")
    copy = Path(name)
    try:
        with open(path, "rb") as f, os.fdopen(fd, "wb") as out:
            _write_copy(f, out)
    except OSError as error:
        copy.unlink(missing_ok=True)
        raise ReportError(
            path,
            f"truncated, and its salvage copy in {copy.parent} cannot be written "
            f"({error.strerror or error}): free space there or set TMPDIR to another folder",
        ) from None
    except BaseException:
        copy.unlink(missing_ok=True)
        raise
    return copy


def _write_copy(f: BinaryIO, out: BinaryIO) -> None:
    head = f.read(HEADER_SIZE)
    page_size = page_size_of(head)
    (pages,) = struct.unpack(">I", head[28:32])
    size = f.seek(0, 2)
    whole = max(size // page_size, 1)
    padded = min(max(pages - whole, 0), whole)
    # The copy is a rollback-journal database (a WAL-mode header, from a file copied while
    # its writer ran, would make SQLite look for a -wal and -shm beside the copy) whose page
    # count is its own, valid for its change counter.
    header = bytearray(head)
    header[18:20] = b"\x01\x01"
    header[28:32] = struct.pack(">I", whole + padded)
    header[92:96] = header[24:28]
    out.write(bytes(header))
    f.seek(len(head))
    left = max(whole * page_size - len(head), 0)
    while left:
        chunk = f.read(min(left, 1 << 24))
        if not chunk:
            break
        out.write(chunk)
        left -= len(chunk)
    pad = left + padded * page_size  # left > 0: a short first page
    filler = b"\xff" * min(pad, 1 << 20)
    while pad > 0:
        out.write(filler[: min(pad, len(filler))])
        pad -= len(filler)


def sweep_stale_copies(folder: Path | None = None) -> list[Path]:
    """Remove the salvage copies in ``folder`` (the temporary folder) whose process is gone,
    once per process unless ``folder`` is given; returns what was removed."""
    global _swept
    if folder is None:
        if _swept:
            return []
        _swept = True
    folder = Path(tempfile.gettempdir()) if folder is None else folder
    removed = []
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            match = _COPY_NAME.fullmatch(entry.name)
            if match and not _process_alive(int(match.group(1))):
                with contextlib.suppress(OSError):
                    entry.unlink()
                    removed.append(entry)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except (OverflowError, ValueError):
        return False  # no process has such a number
    return pid > 0
