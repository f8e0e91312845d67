"""PvtiWriter: records host trace events in memory and commits them to a .pvti file in batches.

Batches are committed at least every ``flush_interval_s`` (100 ms) by a daemon flusher
thread, on ``flush()``/``close()`` and at interpreter exit, each as one SQLite transaction
in WAL mode. A process killed with SIGKILL therefore leaves a file that holds every batch
committed before the kill, and readers can follow the file while it grows.

Spans are written when they end. Spans still open at a commit are written to
``open_spans`` in the same transaction (replacing the previous commit's set), so the
committed state always nests: every committed event's enclosing spans are either
committed themselves or listed as open.

Memory is bounded by back-pressure: once more than ``max_pending_events`` events wait
uncommitted (a busy loop can record them faster than a starved flusher thread commits),
the recording thread commits them itself before going on. A busy program is slowed to the
writer's pace instead of growing without bound, and a SIGKILL loses at most what was
recorded since the last commit. After a write error (full disk, deleted file) nothing more
is written; later events are dropped and counted in ``dropped_events``. Out of room (a full
disk, a file-size limit), the commit that failed is first written in parts that fit
(``fitting.py``), and with little room from the start the file is laid out to fit it, so
the file stays a closed, readable trace of every event committed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import sqlite3
import sys
import threading
import time
from pathlib import Path

from profiler_core.errors import ReportError
from profiler_core.formats.pvti.commit import PendingCommit, write_commit
from profiler_core.formats.pvti.fitting import fit_pages, out_of_room, write_what_fits
from profiler_core.formats.pvti.recording import EventBuffer, OpenSpansSource
from profiler_core.formats.pvti.schema import (
    FORMAT_MAJOR,
    FORMAT_MINOR,
    PRODUCER,
    WRITER_CLOSED,
    WRITER_FAILED,
    WRITER_WRITING,
    create_tables,
    reserve_trace_file,
)

#: The files SQLite keeps beside a WAL-mode database.
_SIDE = ("-wal", "-shm")

#: Connections inherited across fork(): kept alive forever so the child never closes them.
_FORKED_AWAY: list[sqlite3.Connection] = []


class PvtiWriter(EventBuffer):
    """Writes one ``<YYYY_MM_DD>_<HHMMSS>_<pid>.pvti`` file in ``directory``.

    Timestamps are ``time.monotonic_ns()`` values; the wall-clock and monotonic origins
    taken together at creation are stored in ``meta`` so traces of several processes
    align in absolute time. All methods are thread-safe.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        process_name: str | None = None,
        flush_interval_s: float = 0.1,
        background: bool = True,
        max_pending_events: int = 20_000,
    ) -> None:
        try:
            self.path: Path = reserve_trace_file(directory)
        except OSError as exc:
            raise ReportError(directory, f"cannot create a trace file: {exc.strerror}") from None
        self.origin_monotonic_ns = time.monotonic_ns()
        self.origin_wall_ns = time.time_ns()
        self.flush_interval_s = flush_interval_s
        #: OS thread id -> name, for thread rows; callers fill it as threads appear.
        self.thread_names: dict[int, str] = {}
        #: Called at each commit to list the spans open now; see OpenSpansSource.
        self.open_spans_source: OpenSpansSource | None = None
        self.committed_events = 0
        self.commits = 0
        self.error: BaseException | None = None
        EventBuffer.__init__(self, max_pending_events)
        self._lock = threading.RLock()
        self._closed = False
        self._stop = threading.Event()

        try:
            self._conn = self._create(process_name or _process_name())
        except sqlite3.Error as exc:
            # Not even the tables fitted: leave no file that is no trace.
            for path in (self.path, *(self.path.with_name(self.path.name + s) for s in _SIDE)):
                path.unlink(missing_ok=True)
            raise ReportError(
                self.path, f"cannot be written as SQLite ({exc}), so it was not kept"
            ) from None
        atexit.register(self.close)
        self._flusher: threading.Thread | None = None
        if background:
            self._flusher = threading.Thread(target=self._run, name="pvti-flusher", daemon=True)
            self._flusher.start()

    # -- recording -------------------------------------------------------------------

    def name_thread(self, os_tid: int, name: str) -> None:
        """Name OS thread ``os_tid`` (used when its first event is committed)."""
        self.thread_names[os_tid] = name

    # -- committing ------------------------------------------------------------------

    def relieve(self) -> None:
        """Back-pressure: the recording thread found too many events pending and commits
        them itself, so memory stays bounded however starved the flusher thread is."""
        if self._closed:
            return
        self.backpressure_commits += 1
        self.flush()

    def flush(self) -> None:
        """Commit everything recorded so far as one transaction."""
        with self._lock:
            if self._closed:
                return
            if self.error is not None:
                self._drop_pending()
                return
            pending = self._collect()
            if pending is None:
                return
            try:
                self._write(pending)
            except (sqlite3.Error, OSError) as exc:
                # A full disk or a deleted file must not take the traced program down.
                self._stop_writing(exc, pending)

    def _stop_writing(self, exc: BaseException, pending: PendingCommit) -> None:
        """After a failed commit: say so in the file and once on stderr, and commit what
        fits of the failed commit (a full disk or a file-size limit) before stopping."""
        self.error = exc
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")
        self._set_state(f"{WRITER_FAILED} ({exc})")  # the rollback freed room for this
        events = sum(len(cols["start_ns"]) for cols, _ in pending.batches)
        fitted = write_what_fits(self._conn, pending) if out_of_room(exc) else 0
        self.committed_events += fitted
        self.dropped_events += events - fitted
        print(
            f"pvti: stopped writing {self.path}: {exc}; it keeps the "
            f"{self.committed_events:,} events committed, later ones are dropped",
            file=sys.stderr,
        )

    def _set_state(self, state: str) -> None:
        """Record in the file how its writing ended, so a reader can say it is incomplete.
        After a write error this small update may fail too (the disk is still full): the
        file then keeps "writing", which readers report as never closed -- still honest."""
        with contextlib.suppress(sqlite3.Error, OSError):
            self._conn.execute("UPDATE meta SET value = ? WHERE key = 'writer_state'", (state,))

    def close(self) -> None:
        """Commit what is left, stop the flusher and close the file. Idempotent."""
        with self._lock:
            if self._closed:
                return
        self._stop.set()
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join()
        with self._lock:
            if self._closed:
                return
            self.flush()
            self._closed = True
            atexit.unregister(self.close)
            if self.error is None:
                self._set_state(WRITER_CLOSED)
                self._leave_wal()
            else:
                # Out of room, the -wal may have none left for the final state: moved into
                # the file first, the state is rewritten in place.
                self._leave_wal()
                self._set_state(
                    f"{WRITER_FAILED} ({self.error}) and {self.dropped_events:,} events were "
                    "not written"
                )
            self._conn.close()

    def _leave_wal(self) -> None:
        """Once complete, the file becomes one self-contained rollback-journal database;
        skipped (stays WAL) while a reader has it open."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA busy_timeout = 50")
            self._conn.execute("PRAGMA journal_mode = DELETE")

    def detach_after_fork(self) -> None:
        """In a forked child: forget this (the parent's) file without touching it.

        SQLite connections must not cross a fork, so the connection is deliberately
        leaked rather than closed, and nothing more is written through this writer.
        """
        self._closed = True
        self._stop.set()
        atexit.unregister(self.close)
        _FORKED_AWAY.append(self._conn)  # never garbage-collected, so never closed here

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> PvtiWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ReportError(self.path, "the trace writer is closed")

    def _create(self, process_name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=5.0
        )
        meta = {
            "format_major": FORMAT_MAJOR,
            "format_minor": FORMAT_MINOR,
            "producer": PRODUCER,
            "pid": os.getpid(),
            "hostname": socket.gethostname(),
            "process_name": process_name,
            "origin_wall_ns": self.origin_wall_ns,
            "origin_monotonic_ns": self.origin_monotonic_ns,
            "writer_state": WRITER_WRITING,
        }
        try:
            fit_pages(conn, self.path.parent)
            conn.execute("PRAGMA journal_mode = WAL")
            # WAL + NORMAL: a committed batch survives the process being killed (only a
            # power cut can lose the last commits), at a fraction of FULL's fsync cost.
            conn.execute("PRAGMA synchronous = NORMAL")
            create_tables(conn, meta)
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def _run(self) -> None:
        while not self._stop.wait(self.flush_interval_s):
            self.flush()

    def _write(self, pending: PendingCommit) -> None:
        pending.dictionaries = self._dictionary_rows()
        write_commit(self._conn, pending)
        self._last_open = pending.open_spans
        self.committed_events += sum(len(cols["start_ns"]) for cols, _ in pending.batches)
        self.commits += 1


def _process_name() -> str:
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "python"
    return Path(argv0).name or "python"
