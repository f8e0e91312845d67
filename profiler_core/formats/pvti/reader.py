"""Read a .pvti file into numpy columns, all at once or incrementally while it is written.

Speed comes from the batch layout (see schema.py): a trace of N events in B batch rows
costs B row fetches and one copy per column per batch into columns allocated once
(``event_batches.py``), so reading is bound by memory bandwidth, not by Python, and needs
little more memory than the columns. Every read runs in one SQLite read transaction, so
dictionaries, batches and open spans are one consistent snapshot. Each problem is a
ReportError naming the file; nothing else escapes. A truncated file is salvaged instead:
every committed row whose pages are present is read and ``incomplete`` says what is lost.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from pathlib import Path

import numpy as np

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.pvti import event_batches
from profiler_core.formats.pvti.contents import (
    HeatmapDef,
    ProcessRow,
    PvtiDelta,
    PvtiMeta,
    SeriesDef,
    ThreadRow,
)
from profiler_core.formats.pvti.schema import (
    EVENT_COLUMNS,
    FORMAT_MAJOR,
    FORMAT_MINOR,
    HEATMAP_DTYPES,
    MAX_TIME_NS,
    META_KEYS,
    READABLE_DTYPES,
    REQUIRED_TABLES,
    EventKind,
)
from profiler_core.formats.pvti.sqlite_file import (
    StepBudget,
    connect_readonly,
    tables_and_views,
    translate_errors,
)

_SAMPLE_DTYPE = np.dtype([("row", "<i8"), ("series", "<i8"), ("t", "<i8"), ("v", "<f8")])


class PvtiNotStartedError(ReportError):
    """A SQLite file without any table yet: a writer created it but has not committed."""


class PvtiReader:
    """Follows one .pvti file; each ``read_new()`` returns what was committed since."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn, self.truncated = connect_readonly(self.path)
        self._budget = StepBudget(self._conn, self.path)
        #: What a truncated file lost, in words (salvaging only).
        self.lost: list[str] = []
        self.meta: PvtiMeta | None = None
        self.processes: list[ProcessRow] = []
        self.threads: list[ThreadRow] = []
        self.channels: list[str] = []
        self.labels: list[str] = []
        self.series: list[SeriesDef] = []
        self.heatmaps: list[HeatmapDef] = []
        self.n_events = 0
        self._dtypes: dict[str, np.dtype] = {}
        self._last_batch = 0
        self._last_sample = 0
        self._last_heat = 0

    def read_new(self, *, open_spans_in_events: bool = False) -> PvtiDelta:
        """Everything committed since the last call, as one consistent snapshot.

        With ``open_spans_in_events`` the events' columns also hold the open spans, last
        (allocated with them, so a whole-file read never concatenates).
        """
        with translate_errors(self.path), self._budget.bounding():
            self._conn.execute("BEGIN")
            try:
                if self.meta is None:
                    self._read_layout_or_salvage()
                if not self._dtypes:  # a truncated file that lost its tables
                    return _empty_delta()
                self._read_dictionaries()
                open_spans = self._read_open_spans()
                events, args = self._read_batches(open_spans if open_spans_in_events else None)
                delta = PvtiDelta(events, args, open_spans, *self._read_samples())
                self._read_heat_samples(delta)
                if self.truncated:
                    self._name_lost_ids(events)
            finally:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
        return delta

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PvtiReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one-off layout ----------------------------------------------------------------

    def _read_layout_or_salvage(self) -> None:
        if not self.truncated:
            self._read_layout()
            return
        try:
            self._read_layout()
        except (sqlite3.DatabaseError, ReportError) as exc:
            if isinstance(exc, FormatVersionError):
                raise
            # The schema or meta pages are gone: nothing committed can be placed in time.
            self._dtypes = {}
            self.processes = []
            self.lost.append("its tables (the first pages are missing)")
            name = self.path.stem
            self.meta = PvtiMeta(FORMAT_MAJOR, FORMAT_MINOR, "", 0, "", name, 0, 0)

    def _read_layout(self) -> None:
        tables, views = tables_and_views(self._conn)
        if not tables and not views:
            raise PvtiNotStartedError(self.path, "not a .pvti trace: no tables at all")
        missing = [t for t in REQUIRED_TABLES if t not in tables]
        if views.intersection(missing):
            named = ", ".join(t for t in missing if t in views)
            raise ReportError(self.path, f"not a .pvti trace: {named} must be a table, not a view")
        if missing:
            raise ReportError(self.path, f"not a .pvti trace: missing {', '.join(missing)}")
        self.meta = self._read_meta()
        columns = dict(self._conn.execute("SELECT name, dtype FROM event_columns"))
        for name in EVENT_COLUMNS:
            dtype = columns.get(name)
            if dtype not in READABLE_DTYPES:
                raise ReportError(self.path, f"event column {name!r} has dtype {dtype!r}")
            self._dtypes[name] = np.dtype(dtype)
        rows = self._conn.execute("SELECT id, pid, hostname, name FROM processes ORDER BY id")
        for i, (row_id, pid, host, name) in enumerate(rows):
            self._expect(row_id == i, f"process ids are not 0..n-1 (found {row_id!r})")
            self.processes.append(ProcessRow(int(pid), str(host), str(name)))

    def _read_meta(self) -> PvtiMeta:
        meta = dict(self._conn.execute("SELECT key, value FROM meta"))
        missing = [k for k in META_KEYS if k not in meta]
        if missing:
            raise ReportError(self.path, f"meta table lacks {', '.join(missing)}")
        try:
            major, minor = int(meta["format_major"]), int(meta["format_minor"])
        except (TypeError, ValueError):
            raise ReportError(self.path, "format version is not a number") from None
        if major != FORMAT_MAJOR:
            raise FormatVersionError(
                self.path,
                f"written in .pvti format {major}.{minor}; this reader knows major "
                f"version {FORMAT_MAJOR} only (upgrade popvision-py to open it)",
            )
        try:
            for key in ("origin_wall_ns", "origin_monotonic_ns"):
                if abs(int(meta[key])) >= MAX_TIME_NS:
                    raise ReportError(self.path, f"meta '{key}' = {meta[key]} is out of range")
            return PvtiMeta(
                major,
                minor,
                str(meta["producer"]),
                int(meta["pid"]),
                str(meta["hostname"]),
                str(meta["process_name"]),
                int(meta["origin_wall_ns"]),
                int(meta["origin_monotonic_ns"]),
                str(meta.get("writer_state", "")),
            )
        except (TypeError, ValueError):
            raise ReportError(self.path, "meta table holds a malformed number") from None

    # -- incremental parts -------------------------------------------------------------

    def _rows(self, what: str, statement: str, params: tuple = ()) -> list[tuple]:
        """The rows of ``statement``; salvaging, the ones read before a missing page."""
        if not self.truncated:
            return self._conn.execute(statement, params).fetchall()
        rows: list[tuple] = []
        try:
            for row in self._conn.execute(statement, params):
                rows.append(row)
        except sqlite3.DatabaseError:
            self.lost.append(f"{what} after the first {len(rows):,}")
        return rows

    def _new_rows(self, table: str, columns: str, have: int) -> list[tuple]:
        rows = self._rows(
            table, f"SELECT id, {columns} FROM {table} WHERE id >= ? ORDER BY id", (have,)
        )
        for i, row in enumerate(rows):
            self._expect(row[0] == have + i, f"{table} ids are not 0..n-1 (found {row[0]!r})")
        return [row[1:] for row in rows]

    def _read_dictionaries(self) -> None:
        self.channels += [str(r[0]) for r in self._new_rows("channels", "name", len(self.channels))]
        self.labels += [str(r[0]) for r in self._new_rows("labels", "text", len(self.labels))]
        for process, os_tid, name, kind in self._new_rows(
            "threads", "process, os_tid, name, kind", len(self.threads)
        ):
            self._expect(kind in ("thread", "track"), f"thread kind {kind!r} is unknown")
            self._expect(0 <= process < len(self.processes), f"thread of process {process!r}")
            tid = None if os_tid is None else int(os_tid)
            self.threads.append(ThreadRow(int(process), tid, str(name), str(kind)))
        for graph, unit, name in self._new_rows("series", "graph, unit, name", len(self.series)):
            self.series.append(SeriesDef(str(graph), str(unit), str(name)))
        for name, unit, edges, dtype in self._new_rows(
            "heatmaps", "name, unit, edges, edges_dtype", len(self.heatmaps)
        ):
            self._expect(dtype == "<f8", f"heatmap {name!r} edges dtype {dtype!r}")
            self._expect(isinstance(edges, bytes) and len(edges) % 8 == 0, "heatmap edges blob")
            edge_array = np.frombuffer(edges, "<f8").astype(np.float64)
            self.heatmaps.append(HeatmapDef(str(name), str(unit), edge_array))

    def _read_batches(
        self, open_spans: dict[str, np.ndarray] | None
    ) -> tuple[dict[str, np.ndarray], dict[int, str]]:
        if self.truncated:
            plan = event_batches.salvage_plan(self._conn, self._last_batch, self._dtypes)
            if plan.lost:
                self.lost.append(f"{len(plan.lost):,} event batch(es) with missing pages")
            if plan.end_unknown:
                last = plan.ids[-1] if plan.ids else self._last_batch
                self.lost.append(f"any event batch committed after batch {last}")
        else:
            plan = event_batches.plan_batches(
                self._conn, self._last_batch, self._dtypes, self._expect
            )
        n_open = len(open_spans["start_ns"]) if open_spans is not None else 0
        events = event_batches.allocate(plan.total + n_open)
        starts = event_batches.fill(self._conn, plan, events, self._dtypes, self._expect)
        if plan.damaged:
            self.lost.append(f"{len(plan.damaged):,} event batch(es) that fail their checksum")
        if open_spans is not None:
            for name, column in events.items():
                column[plan.total :] = open_spans[name]
        finished = {name: column[: plan.total] for name, column in events.items()}
        if not self.truncated:  # salvaged batches were checked one by one
            self._validate_events(finished, allow_open=False)
        batch_start = {b: self.n_events + i for b, i in zip(plan.ids, starts, strict=True)}
        args: dict[int, str] = {}
        if plan.ids:
            for batch, item, text in self._rows(
                "event arguments",
                "SELECT batch, item, json FROM event_args WHERE batch > ? AND batch <= ?",
                (self._last_batch, plan.ids[-1]),
            ):
                if (self.truncated or plan.damaged) and batch not in batch_start:
                    continue  # the arguments of a batch that was lost
                self._expect(batch in batch_start and isinstance(item, int), "event_args row")
                self._expect(isinstance(text, str), "event_args json is not text")
                args[batch_start[batch] + item] = text
            self._last_batch = plan.ids[-1]
        self._last_batch = max([self._last_batch, *plan.damaged])  # not read again
        self.n_events += plan.total
        return events, args

    def _name_lost_ids(self, events: dict[str, np.ndarray]) -> None:
        """Salvaging: name the threads, channels and labels whose rows were lost."""
        if not len(events["start_ns"]):
            return
        for column, table, make in (
            ("thread", self.threads, lambda i: ThreadRow(0, None, f"thread {i} (lost)", "thread")),
            ("channel", self.channels, lambda i: f"channel {i} (lost)"),
            ("label", self.labels, lambda i: f"label {i} (lost)"),
        ):
            table.extend(make(i) for i in range(len(table), int(events[column].max()) + 1))

    def _read_open_spans(self) -> dict[str, np.ndarray]:
        rows = self._rows(
            "open spans", "SELECT start_ns, as_of_ns, thread, channel, label, depth FROM open_spans"
        )
        table = np.array(rows, dtype=np.int64).reshape(len(rows), 6)
        events = {
            "start_ns": table[:, 0].copy(),
            "end_ns": np.maximum(table[:, 1], table[:, 0]),
            "thread": table[:, 2].astype(np.int32),
            "channel": table[:, 3].astype(np.int32),
            "label": table[:, 4].astype(np.int32),
            "kind": np.full(len(rows), EventKind.OPEN, np.uint8),
            "depth": table[:, 5].astype(np.int32),
        }
        if self.truncated:  # open spans of lost threads, labels or channels are dropped
            keep = (
                (events["thread"] < len(self.threads))
                & (events["label"] < len(self.labels))
                & (events["channel"] < len(self.channels))
            )
            events = {name: column[keep] for name, column in events.items()}
        self._validate_events(events, allow_open=True)
        return events

    def _read_samples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = self._rows(
            "series samples",
            "SELECT rowid, series, t_ns, value FROM series_samples WHERE rowid > ? ORDER BY rowid",
            (self._last_sample,),
        )
        # SQLite stores a NaN as NULL (format 1.1): it reads back as NaN
        nan = math.nan
        table = np.fromiter(
            ((r, s, t, nan if v is None else v) for r, s, t, v in rows),
            _SAMPLE_DTYPE,
            count=len(rows),
        )
        if len(table):
            self._last_sample = int(table["row"][-1])
            bad = (table["series"] < 0) | (table["series"] >= len(self.series))
            self._expect(not bad.any(), "a series sample refers to no series")
        return table["series"].copy(), table["t"].copy(), table["v"].copy()

    def _read_heat_samples(self, delta: PvtiDelta) -> None:
        ids, times = [], []
        for row, heatmap, t_ns, blob, dtype in self._rows(
            "heatmap samples",
            "SELECT rowid, heatmap, t_ns, counts, dtype FROM heatmap_samples "
            "WHERE rowid > ? ORDER BY rowid",
            (self._last_heat,),
        ):
            self._expect(isinstance(heatmap, int) and 0 <= heatmap < len(self.heatmaps), "heatmap")
            self._expect(dtype in HEATMAP_DTYPES and isinstance(blob, bytes), "heatmap sample")
            counts = np.frombuffer(blob, dtype)
            buckets = len(self.heatmaps[heatmap].edges) + 1
            self._expect(len(counts) == buckets, f"heatmap sample has {len(counts)} buckets")
            ids.append(heatmap)
            times.append(int(t_ns))
            delta.heatmap_counts.append(counts.astype(np.int64))
            self._last_heat = row
        delta.heatmap_id = np.array(ids, dtype=np.int64)
        delta.heatmap_t_ns = np.array(times, dtype=np.int64)

    # -- checks ------------------------------------------------------------------------

    def _validate_events(self, ev: dict[str, np.ndarray], *, allow_open: bool) -> None:
        if not len(ev["start_ns"]):
            return
        for name, table in (("thread", self.threads), ("channel", self.channels)):
            col = ev[name]
            self._expect(col.min() >= 0 and col.max() < len(table), f"an event's {name} id")
        label = ev["label"]
        self._expect(label.min() >= 0 and label.max() < len(self.labels), "an event's label id")
        kinds = [EventKind.SPAN, EventKind.INSTANT] + ([EventKind.OPEN] if allow_open else [])
        self._expect(bool(np.isin(ev["kind"], kinds).all()), "an event has an unknown kind")
        self._expect(ev["depth"].min() >= 0, "an event has a negative depth")
        self._expect(bool((ev["end_ns"] >= ev["start_ns"]).all()), "an event ends before start")

    def _expect(self, ok: bool, problem: str) -> None:
        if not ok:
            raise ReportError(self.path, f"corrupt .pvti: {problem}")


def _empty_delta() -> PvtiDelta:
    empty = event_batches.allocate(0)
    return PvtiDelta(empty, {}, dict(empty), np.zeros(0, np.int64), np.zeros(0, np.int64),
                     np.zeros(0))  # fmt: skip
