"""Commit what fits: a commit that failed for lack of room (a full disk, a file-size limit) is
written again in smaller transactions, halving any part that does not fit, until a part of
one row does not: the file keeps every event there was room for, as a whole trace.

Every part replaces the open spans with the commit's own, so the committed state is a
consistent snapshot after each part; the spans of the commit that found no room are lost
with the events after them (the writer's state says it failed).
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from profiler_core.formats.pvti.commit import PendingCommit, write_commit

try:
    import resource
except ImportError:  # Windows: no resource module, no RLIMIT_FSIZE
    resource = None  # type: ignore[assignment]

_NO_ROOM_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def out_of_room(error: BaseException) -> bool:
    """Whether ``error`` says the disk is full or the file may not grow (SQLite reports a
    full disk as SQLITE_FULL and a file-size limit as an I/O error on write)."""
    if isinstance(error, OSError):
        return error.errno in _NO_ROOM_ERRNOS
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(code, int) and (
        code == sqlite3.SQLITE_FULL or code & 0xFF == sqlite3.SQLITE_IOERR
    )


@dataclass
class _Part:
    """Rows [start, stop) of one kind of row in a commit."""

    kind: str  # "batch", "series" or "heat"
    index: int  # which event batch, for kind "batch"
    start: int
    stop: int

    def halves(self) -> tuple[_Part, _Part]:
        middle = (self.start + self.stop) // 2
        return (
            _Part(self.kind, self.index, self.start, middle),
            _Part(self.kind, self.index, middle, self.stop),
        )


def write_what_fits(conn: sqlite3.Connection, pending: PendingCommit) -> int:
    """Write ``pending`` (whose one transaction did not fit and was rolled back) in parts
    that fit; returns how many of its events were committed."""
    writer = _PartWriter(conn, pending)
    with contextlib.suppress(_NoRoomError):
        for part in _whole_parts(pending):
            writer.write(part)
    return writer.events


class _NoRoomError(Exception):
    """A part of one row did not fit: nothing more will."""


class _PartWriter:
    def __init__(self, conn: sqlite3.Connection, pending: PendingCommit) -> None:
        self.conn, self.pending = conn, pending
        #: per dictionary table, its new rows by id, dropped from here once written
        self.unwritten = {
            table: {row[0]: row for row in rows} for table, rows in pending.dictionaries.items()
        }
        self.events = 0

    def write(self, part: _Part) -> None:
        """Commit ``part``, or its halves one after the other when it does not fit."""
        if part.stop <= part.start:
            return
        commit = self._commit_of(part)
        try:
            write_commit(self.conn, commit)
        except (sqlite3.Error, OSError) as error:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            if not out_of_room(error) or part.stop - part.start == 1:
                raise _NoRoomError from None
            first, second = part.halves()
            self.write(first)
            self.write(second)
            return
        for table, rows in commit.dictionaries.items():
            for row in rows:
                del self.unwritten[table][row[0]]
        if part.kind == "batch":
            self.events += part.stop - part.start

    def _commit_of(self, part: _Part) -> PendingCommit:
        """The part's rows, with the dictionary rows (threads, channels, labels, series,
        heatmaps) its rows and the open spans refer to that are not yet written."""
        pending = self.pending
        commit = PendingCommit(pending.open_spans, open_rows=pending.open_rows)
        open_ids = np.array([row[:3] for row in pending.open_rows], np.int64).reshape(-1, 3)
        needed = {table: open_ids[:, i] for i, (table, _) in enumerate(_EVENT_IDS)}
        if part.kind == "batch":
            cols, args = pending.batches[part.index]
            rows = slice(part.start, part.stop)
            picked = {i - part.start: t for i, t in args.items() if part.start <= i < part.stop}
            cols = {name: col[rows] for name, col in cols.items()}
            commit.batches = [(cols, picked)]
            for table, column in _EVENT_IDS:
                needed[table] = np.concatenate([needed[table], cols[column]])
        elif part.kind == "series":
            commit.series_rows = pending.series_rows[part.start : part.stop]
            needed["series"] = np.array([row[0] for row in commit.series_rows])
        else:
            commit.heat_rows = pending.heat_rows[part.start : part.stop]
            needed["heatmaps"] = np.array([row[0] for row in commit.heat_rows])
        # Readers need each table's ids to run 0..n-1: every unwritten row up to the highest
        # id needed (ids are given in order of first use, so a part's prefix is short).
        commit.dictionaries = {}
        for table, unwritten in self.unwritten.items():
            ids = needed.get(table)
            top = int(ids.max()) if ids is not None and ids.size else -1
            commit.dictionaries[table] = [row for i, row in unwritten.items() if i <= top]
        return commit


_EVENT_IDS = (("threads", "thread"), ("channels", "channel"), ("labels", "label"))


def _whole_parts(pending: PendingCommit) -> Iterator[_Part]:
    """Each batch, then the series samples, then the heatmap samples."""
    for index, (cols, _) in enumerate(pending.batches):
        yield _Part("batch", index, 0, len(np.asarray(cols["start_ns"])))
    yield _Part("series", 0, 0, len(pending.series_rows))
    yield _Part("heat", 0, 0, len(pending.heat_rows))


SMALL_ROOM = 64 * 1024 * 1024
"""Below this much room (a file-size limit, free disk) a trace is written in small pages."""
SMALL_PAGE = 1024
RESERVE_PAGES = 8


def room_for(directory: Path) -> int:
    """How far a file in ``directory`` may grow: the file-size limit (RLIMIT_FSIZE) or the
    free disk space, whichever is less."""
    room = shutil.disk_usage(directory).free
    if resource is not None:
        limit, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
        if limit != resource.RLIM_INFINITY:
            room = min(room, limit)
    return room


def fit_pages(conn: sqlite3.Connection, directory: Path) -> None:
    """Before the file's first page, with little room: pages of 1 KiB (the tables take 21
    pages: 86 KiB in SQLite's usual 4 KiB pages, more than a 64 KiB limit allows), a -wal
    checkpointed every quarter of the room, and a database never larger than the room less
    ``RESERVE_PAGES``, so the -wal can always be moved into the file at close and the
    writer's final state still written (SQLite stops a commit that would grow it further
    with SQLITE_FULL, before writing anything)."""
    try:
        room = room_for(directory)
    except OSError:
        return
    if room < SMALL_ROOM:
        pages = room // SMALL_PAGE
        conn.execute(f"PRAGMA page_size = {SMALL_PAGE}")
        conn.execute(f"PRAGMA wal_autocheckpoint = {max(pages // 4, 8)}")
        conn.execute(f"PRAGMA max_page_count = {max(pages - RESERVE_PAGES, 1)}")
