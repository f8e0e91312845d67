"""Open a .pvti file read-only and turn every SQLite or file problem into a ReportError.

Readers never modify a trace: the connection is a ``mode=ro`` URI, so a file still being
written (WAL mode) is read concurrently and safely.
"""

from __future__ import annotations

import contextlib
import sqlite3
import struct
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


def check_file(path: Path) -> None:
    """Refuse, with a readable reason, anything that is not a whole SQLite file."""
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
        raise ReportError(path, f"truncated: {size} of {expected} bytes")


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the checked SQLite file ``path``."""
    check_file(path)
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    with translate_errors(path):
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA query_only = 1")
    return conn


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
