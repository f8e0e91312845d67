"""Open a .pvti file read-only and turn every SQLite or file problem into a ReportError.

Readers never modify a trace: the connection is a ``mode=ro`` URI, so a file still being
written (WAL mode) is read concurrently and safely. A file cut short (a copy taken while it
was written, a full disk) is opened too, flagged as truncated, so the reader can salvage
the committed rows whose pages are present.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from profiler_core.errors import ReportError
from profiler_core.formats.files import regular_file_size

SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER_SIZE = 100


def is_sqlite(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts like a SQLite database."""
    return head.startswith(SQLITE_MAGIC)


def check_file(path: Path) -> str:
    """Refuse, with a readable reason, anything that is not a SQLite file.

    Returns "" for a whole file, else how much of it is missing (``truncated: N of M
    bytes``): such a file is still read, salvaging what is present.
    """
    try:
        size = regular_file_size(path)  # a FIFO or device is refused before opening
        with open(path, "rb") as f:
            head = f.read(_HEADER_SIZE)
    except FileNotFoundError:
        raise ReportError(path, "no such file") from None
    except IsADirectoryError:
        raise ReportError(path, "is a folder, not a .pvti file") from None
    except OSError as exc:
        raise ReportError(path, f"cannot be read: {exc.strerror or exc}") from None
    if size == 0:
        raise ReportError(path, "empty file: not a .pvti trace")
    if not is_sqlite(head):
        raise ReportError(path, "not a SQLite database (a .pvti trace is a SQLite file)")
    if len(head) < _HEADER_SIZE:
        raise ReportError(path, f"truncated: {size} bytes, shorter than a SQLite header")
    (page_size,) = struct.unpack(">H", head[16:18])
    page_size = 65536 if page_size == 1 else page_size
    change_counter, pages, valid_for = (
        struct.unpack(">I", head[i : i + 4])[0] for i in (24, 28, 92)
    )
    # The header's page count is trustworthy when valid_for matches the change counter;
    # with a -wal beside the file, newer pages may live there instead.
    wal = path.with_name(path.name + "-wal")
    expected = pages * page_size
    if valid_for == change_counter and not wal.exists() and size < expected:
        return f"truncated: {size:,} of {expected:,} bytes"
    return ""


def connect_readonly(path: Path) -> tuple[sqlite3.Connection, str]:
    """A read-only connection to the checked SQLite file ``path``, and ``check_file``'s
    truncation note ("" for a whole file).

    A truncated file is read through a copy made whole (``salvage_copy``): SQLite then
    fails each row that touches a missing page instead of the whole file, or reading
    zeros for it.
    """
    truncated = check_file(path)
    target = salvage_copy(path) if truncated else path
    uri = f"file:{quote(str(target.resolve()))}?mode=ro"
    try:
        with translate_errors(path):
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA query_only = 1")
    finally:
        if truncated:  # the open connection keeps the unlinked copy readable (POSIX)
            target.unlink(missing_ok=True)
    return conn, truncated


def salvage_copy(path: Path) -> Path:
    """A temporary copy of truncated ``path``: its whole pages, then 0xFF bytes up to the
    header's page count (the last, partial page counts as missing).

    0xFF pages are invalid wherever SQLite meets them (a b-tree page of type 0xFF, an
    overflow chain pointing past the file), so a row using a missing page fails as
    corrupt. Zeros would not do: a zeroed last overflow page ends its chain cleanly and
    would pass off zeros as the row's values.
    """
    with open(path, "rb") as f:
        head = f.read(_HEADER_SIZE)
        (page_size,) = struct.unpack(">H", head[16:18])
        page_size = 65536 if page_size == 1 else page_size
        (pages,) = struct.unpack(">I", head[28:32])
        size = f.seek(0, 2)
        whole = max(size // page_size, 1)
        fd, name = tempfile.mkstemp(suffix=".pvti", prefix="salvage-")
        with os.fdopen(fd, "wb") as out:
            # The copy is a rollback-journal database: a WAL-mode header (a file copied while
            # its writer ran) would make SQLite look for a -wal and -shm beside the copy.
            out.write(head[:18] + b"\x01\x01" + head[20:])
            f.seek(len(head))
            left = max(whole * page_size - len(head), 0)
            while left:
                chunk = f.read(min(left, 1 << 24))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)
            pad = left + (pages - whole) * page_size  # left > 0: a short first page
            filler = b"\xff" * min(pad, 1 << 20)
            while pad > 0:
                out.write(filler[: min(pad, len(filler))])
                pad -= len(filler)
    return Path(name)


@contextlib.contextmanager
def translate_errors(path: Path) -> Iterator[None]:
    """Re-raise SQLite errors and malformed values met while reading as ReportError."""
    try:
        yield
    except ReportError:
        raise
    except sqlite3.DatabaseError as exc:
        raise ReportError(path, f"corrupt or unreadable SQLite file ({exc})") from None
    except sqlite3.Error as exc:
        raise ReportError(path, f"cannot be read as SQLite ({exc})") from None
    except (ValueError, TypeError, OverflowError, struct.error) as exc:
        raise ReportError(path, f"malformed values ({exc})") from None
    except MemoryError:
        raise ReportError(path, "a stored size is absurd (out of memory reading it)") from None
