"""Open a .pvti file read-only and turn every SQLite or file problem into a ReportError.

Readers never modify a trace: the connection is a ``mode=ro`` URI, so a file still being
written (WAL mode) is read concurrently and safely. A file cut short (a copy taken while it
was written, a full disk) is opened too, flagged as truncated, so the reader can salvage
the committed rows whose pages are present.
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
from profiler_core.formats.pvti.salvage import HEADER_SIZE, page_size_of, salvage_copy

SQLITE_MAGIC = b"SQLite format 3\x00"


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
            head = f.read(HEADER_SIZE)
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
    if len(head) < HEADER_SIZE:
        raise ReportError(path, f"truncated: {size} bytes, shorter than a SQLite header")
    page_size = page_size_of(head)
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


def tables_and_views(conn: sqlite3.Connection) -> tuple[set[str], set[str]]:
    """The names of the file's tables, and of its views (which a reader never queries: a
    recursive view runs as long as its author likes)."""
    rows = conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view')")
    tables, views = set(), set()
    for kind, name in rows:
        (tables if kind == "table" else views).add(name)
    return tables, views


STEPS_PER_BYTE = 64
"""SQLite virtual-machine steps a read may take per byte of the file (and its -wal): reading
a trace takes under one per byte; past the bound a query is stopped as hostile."""
MIN_STEPS = 20_000_000
_CHECK_EVERY = 10_000


class StepBudget:
    """SQLite's progress handler as a bound on every query of one connection: the work of a
    read grows with the file, never with what a hostile schema asks for; and no value may
    be longer than the file itself (a generated column could build a gigabyte string)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self._conn = conn
        self.limit = MIN_STEPS
        self._checks = 0
        self.spent = False
        conn.set_progress_handler(self._tick, _CHECK_EVERY)

    def _tick(self) -> int:
        self._checks += 1
        self.spent = self.spent or self._checks * _CHECK_EVERY > self.limit
        return int(self.spent)

    @contextlib.contextmanager
    def bounding(self) -> Iterator[None]:
        """Bound the queries inside by the file's size now; raise ``ReportError`` naming the
        file when they overrun (salvaging readers swallow SQLite's errors, hence a flag)."""
        wal = self.path.with_name(self.path.name + "-wal")
        size = sum(p.stat().st_size for p in (self.path, wal) if p.exists())
        self.limit, self._checks, self.spent = MIN_STEPS + STEPS_PER_BYTE * size, 0, False
        self._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(size, 1 << 20))
        try:
            yield
        except sqlite3.Error:
            if self.spent:
                raise self._error() from None
            raise
        if self.spent:
            raise self._error()

    def _error(self) -> ReportError:
        return ReportError(
            self.path,
            f"reading it took over {self.limit:,} SQLite steps, more than a .pvti of its "
            "size needs: a corrupt or hostile file (sqlite_file.STEPS_PER_BYTE bounds it)",
        )
