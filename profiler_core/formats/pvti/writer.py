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
import json
import os
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.pvti.batch import (
    RECORD_FIELDS,
    Interner,
    columns_from_records,
    drop_completed_spans,
    span_keys,
    split_columns,
)
from profiler_core.formats.pvti.commit import PendingCommit, write_commit
from profiler_core.formats.pvti.fitting import fit_pages, out_of_room, write_what_fits
from profiler_core.formats.pvti.schema import (
    FORMAT_MAJOR,
    FORMAT_MINOR,
    MAX_BATCH_EVENTS,
    PRODUCER,
    WRITER_CLOSED,
    WRITER_FAILED,
    WRITER_WRITING,
    EventKind,
    create_tables,
    reserve_trace_file,
)

#: Returns the spans open right now as (thread_key, channel, label, start_ns, depth).
OpenSpansSource = Callable[[], Iterable[tuple[Any, str, str, int, int]]]

#: The files SQLite keeps beside a WAL-mode database.
_SIDE = ("-wal", "-shm")

#: Connections inherited across fork(): kept alive forever so the child never closes them.
_FORKED_AWAY: list[sqlite3.Connection] = []


class PvtiWriter:
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
        #: Events recorded after a write error, never written.
        self.dropped_events = 0
        #: Commits a recording thread made itself because too many events were pending.
        self.backpressure_commits = 0
        self.max_pending_events = max_pending_events
        #: The hot path commits (``relieve()``) once ``len(records_buffer)`` passes this.
        self.pending_limit = max_pending_events * RECORD_FIELDS

        self._records: list = []
        #: The flat record list the hot path extends (see ``record``).
        self.records_buffer: list = self._records
        #: The hot path: extend with one RECORD_FIELDS-tuple per event (see batch.py).
        self.record: Callable[[tuple], None] = self._records.extend
        self._samples: list[tuple[str, str, str, int, float]] = []
        self._heat_samples: list[tuple[str, int, np.ndarray]] = []
        self._bulk: list[dict[str, np.ndarray]] = []
        self._threads, self._channels, self._labels = Interner(), Interner(), Interner()
        self._series, self._heatmaps = Interner(), Interner()
        self._series_units: dict[tuple[str, str], str] = {}
        self._heatmap_defs: dict[str, tuple[str, np.ndarray]] = {}
        self._last_open: list = []
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

    def add_span(
        self,
        track: str | int,
        channel: str,
        label: str,
        start_ns: int,
        end_ns: int,
        depth: int = 0,
        args: dict | None = None,
    ) -> None:
        """One finished span on ``track`` (a track name such as "IPU 0", or an OS tid)."""
        self._check_open()
        if end_ns < start_ns:
            raise ValueError(f"span {label!r} ends ({end_ns}) before it starts ({start_ns})")
        self.record((start_ns, end_ns, track, channel, label, EventKind.SPAN, depth, _json(args)))
        if len(self._records) > self.pending_limit:
            self.relieve()

    def add_instant(
        self,
        track: str | int,
        channel: str,
        label: str,
        t_ns: int,
        depth: int = 0,
        args: dict | None = None,
    ) -> None:
        """One instant event at ``t_ns`` on ``track``."""
        self._check_open()
        self.record((t_ns, t_ns, track, channel, label, EventKind.INSTANT, depth, _json(args)))
        if len(self._records) > self.pending_limit:
            self.relieve()

    def add_spans(
        self,
        track: str | int,
        channel: str,
        start_ns: np.ndarray,
        end_ns: np.ndarray,
        label_names: Sequence[str],
        label_index: np.ndarray,
        depth: np.ndarray | int = 0,
    ) -> None:
        """Many finished spans on one track at once, without a per-span Python step.

        Span ``i`` is labelled ``label_names[label_index[i]]``.
        """
        self._check_open()
        start = np.asarray(start_ns, dtype=np.int64)
        end = np.asarray(end_ns, dtype=np.int64)
        index = np.asarray(label_index)
        n = len(start)
        if len(end) != n or len(index) != n:
            raise ValueError("start_ns, end_ns and label_index must have the same length")
        if n and (index.min() < 0 or index.max() >= len(label_names)):
            raise ValueError("label_index refers past label_names")
        if np.any(end < start):
            raise ValueError("some spans end before they start")
        with self._lock:
            label_ids = np.array([self._labels.id(s) for s in label_names], dtype=np.int32)
            cols = {
                "start_ns": start,
                "end_ns": end,
                "thread": np.full(n, self._threads.id(track), np.int32),
                "channel": np.full(n, self._channels.id(channel), np.int32),
                "label": label_ids[index] if n else np.zeros(0, np.int32),
                "kind": np.full(n, EventKind.SPAN, np.uint8),
                "depth": np.broadcast_to(np.asarray(depth, np.int32), (n,)),
            }
            self._bulk.append(cols)

    def add_sample(self, graph: str, series: str, t_ns: int, value: float, unit: str = "") -> None:
        """One sample of metric ``series`` in ``graph`` (libpvti's Graph/Series)."""
        self._check_open()
        self._samples.append((graph, unit, series, t_ns, float(value)))
        if len(self._samples) > self.max_pending_events:
            self.relieve()

    def declare_heatmap(self, name: str, edges: Sequence[float], unit: str = "") -> None:
        """A heatmap whose samples count values in buckets between ``edges``."""
        self._check_open()
        with self._lock:
            self._heatmap_defs.setdefault(name, (unit, np.asarray(edges, dtype="<f8")))
            self._heatmaps.id(name)

    def add_heatmap_sample(self, name: str, t_ns: int, counts: np.ndarray) -> None:
        """One sample (a count per bucket, ``len(edges) + 1`` buckets) of heatmap ``name``."""
        self._check_open()
        if name not in self._heatmap_defs:
            raise ValueError(f"heatmap {name!r} was not declared")
        self._heat_samples.append((name, t_ns, np.asarray(counts)))
        if len(self._heat_samples) > self.max_pending_events:
            self.relieve()

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

    def _drop_pending(self) -> None:
        """After a write error: forget what was recorded, counting it as lost."""
        self.dropped_events += len(self._take(self._records)) // RECORD_FIELDS
        self.dropped_events += len(self._take(self._samples)) + len(self._take(self._heat_samples))
        bulk, self._bulk = self._bulk, []
        self.dropped_events += sum(len(cols["start_ns"]) for cols in bulk)

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

    def _take(self, buffer: list) -> list:
        # Other threads only ever append, so everything before len() is ours to take.
        n = len(buffer)
        taken = buffer[:n]
        del buffer[:n]
        return taken

    def _open_spans(self, late: list) -> list[tuple]:
        """Spans open as of this commit; see the module docstring for why ``late`` counts."""
        spans = list(self.open_spans_source()) if self.open_spans_source else []
        seen = {(s[0], s[3], s[4]) for s in spans}
        for span in span_keys(late):
            if (span[0], span[3], span[4]) not in seen:
                spans.append(span)
        return spans

    def _collect(self) -> PendingCommit | None:
        """Take everything recorded so far and turn it into rows, or None if nothing new."""
        records = self._take(self._records)
        # Snapshot the open spans after taking the records: a span that ended in between
        # is in neither, so the records that arrived meanwhile (`late`) are counted open.
        late = list(self._records)
        open_spans = self._open_spans(late)
        as_of = time.monotonic_ns()
        samples = self._take(self._samples)
        heat = self._take(self._heat_samples)
        bulk, self._bulk = self._bulk, []
        if not (records or samples or heat or bulk) and open_spans == self._last_open:
            return None
        pending = PendingCommit(open_spans)
        if records:
            pending.batches.append(
                columns_from_records(records, self._threads, self._channels, self._labels)
            )
        for cols in bulk:
            pending.batches += [(p, {}) for p in split_columns(cols, MAX_BATCH_EVENTS)]
        pending.open_rows = [
            (self._threads.id(t), self._channels.id(c), self._labels.id(lab), s, d, as_of)
            for t, c, lab, s, d in open_spans
        ]
        if records and pending.open_rows:
            pending.open_rows = drop_completed_spans(pending.open_rows, pending.batches[0][0])
        for graph, unit, series, t, value in samples:
            self._series_units.setdefault((graph, series), unit)
            pending.series_rows.append((self._series.id((graph, series)), t, value))
        pending.heat_rows = [
            (self._heatmaps.id(name), t, counts.astype("<u4").tobytes(), "<u4")
            for name, t, counts in heat
        ]
        return pending

    def _write(self, pending: PendingCommit) -> None:
        pending.dictionaries = self._dictionary_rows()
        write_commit(self._conn, pending)
        self._last_open = pending.open_spans
        self.committed_events += sum(len(cols["start_ns"]) for cols, _ in pending.batches)
        self.commits += 1

    def _dictionary_rows(self) -> dict[str, list[tuple]]:
        """Rows for threads, channels, labels, series and heatmaps first seen since last."""
        threads = []
        for tid, key in self._threads.take_unwritten():
            if isinstance(key, str):
                threads.append((tid, 0, None, key, "track"))
            else:
                threads.append((tid, 0, key, self.thread_names.get(key, f"Thread {key}"), "thread"))
        heatmaps = []
        for i, name in self._heatmaps.take_unwritten():
            unit, edges = self._heatmap_defs[name]
            heatmaps.append((i, name, unit, edges.tobytes(), "<f8"))
        series = [
            (i, g, self._series_units[(g, s)], s) for i, (g, s) in self._series.take_unwritten()
        ]
        return {
            "threads": threads,
            "channels": self._channels.take_unwritten(),
            "labels": self._labels.take_unwritten(),
            "series": series,
            "heatmaps": heatmaps,
        }


def _json(args: dict | None) -> str | None:
    return None if args is None else json.dumps(args, separators=(",", ":"), default=str)


def _process_name() -> str:
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "python"
    return Path(argv0).name or "python"
