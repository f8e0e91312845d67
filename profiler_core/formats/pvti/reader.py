"""Read a .pvti file into numpy columns, all at once or incrementally while it is written.

Speed comes from the batch layout (see schema.py): a trace of N events in B batch rows
costs B row fetches, one ``np.frombuffer`` per column per batch and one concatenation,
so reading is bound by memory bandwidth, not by Python. Every read runs in one SQLite
read transaction, so dictionaries, batches and open spans are one consistent snapshot.
Each problem is a ReportError naming the file; nothing else escapes.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import numpy as np

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.pvti.contents import (
    HeatmapDef,
    ProcessRow,
    PvtiContents,
    PvtiDelta,
    PvtiMeta,
    SeriesDef,
    ThreadRow,
)
from profiler_core.formats.pvti.schema import (
    EVENT_COLUMNS,
    FORMAT_MAJOR,
    HEATMAP_DTYPES,
    MAX_TIME_NS,
    META_KEYS,
    READABLE_DTYPES,
    REQUIRED_TABLES,
    EventKind,
)
from profiler_core.formats.pvti.sqlite_file import connect_readonly, translate_errors

_SAMPLE_DTYPE = np.dtype([("row", "<i8"), ("series", "<i8"), ("t", "<i8"), ("v", "<f8")])


class PvtiNotStartedError(ReportError):
    """A SQLite file without any table yet: a writer created it but has not committed."""


class PvtiReader:
    """Follows one .pvti file; each ``read_new()`` returns what was committed since."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn = connect_readonly(self.path)
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

    def read_new(self) -> PvtiDelta:
        """Everything committed since the last call, as one consistent snapshot."""
        with translate_errors(self.path):
            self._conn.execute("BEGIN")
            try:
                if self.meta is None:
                    self._read_layout()
                self._read_dictionaries()
                events, args = self._read_batches()
                delta = PvtiDelta(events, args, self._read_open_spans(), *self._read_samples())
                self._read_heat_samples(delta)
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

    def _read_layout(self) -> None:
        tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master")}
        if not tables:
            raise PvtiNotStartedError(self.path, "not a .pvti trace: no tables at all")
        missing = [t for t in REQUIRED_TABLES if t not in tables]
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
            )
        except (TypeError, ValueError):
            raise ReportError(self.path, "meta table holds a malformed number") from None

    # -- incremental parts -------------------------------------------------------------

    def _new_rows(self, table: str, columns: str, have: int) -> list[tuple]:
        rows = self._conn.execute(
            f"SELECT id, {columns} FROM {table} WHERE id >= ? ORDER BY id", (have,)
        ).fetchall()
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

    def _read_batches(self) -> tuple[dict[str, np.ndarray], dict[int, str]]:
        names = list(EVENT_COLUMNS)
        rows = self._conn.execute(
            f"SELECT id, n, {', '.join(names)} FROM event_batches WHERE id > ? ORDER BY id",
            (self._last_batch,),
        ).fetchall()
        parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
        batch_start: dict[int, int] = {}
        position = self.n_events
        for batch_id, n, *blobs in rows:
            self._expect(isinstance(n, int) and n >= 0, f"event batch {batch_id} count {n!r}")
            batch_start[batch_id] = position
            position += n
            for name, blob in zip(names, blobs, strict=True):
                dtype = self._dtypes[name]
                self._expect(
                    isinstance(blob, bytes) and len(blob) == n * dtype.itemsize,
                    f"event batch {batch_id}: column {name} is not {n} x {dtype.itemsize} bytes",
                )
                parts[name].append(np.frombuffer(blob, dtype))
        events = {
            name: _concat(parts[name], self._dtypes[name], EVENT_COLUMNS[name]) for name in names
        }
        self._validate_events(events, allow_open=False)
        args: dict[int, str] = {}
        if rows:
            last = rows[-1][0]
            for batch, item, text in self._conn.execute(
                "SELECT batch, item, json FROM event_args WHERE batch > ? AND batch <= ?",
                (self._last_batch, last),
            ):
                self._expect(batch in batch_start and isinstance(item, int), "event_args row")
                self._expect(isinstance(text, str), "event_args json is not text")
                args[batch_start[batch] + item] = text
            self._last_batch = last
        self.n_events += len(events["start_ns"])
        return events, args

    def _read_open_spans(self) -> dict[str, np.ndarray]:
        rows = self._conn.execute(
            "SELECT start_ns, as_of_ns, thread, channel, label, depth FROM open_spans"
        ).fetchall()
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
        self._validate_events(events, allow_open=True)
        return events

    def _read_samples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cursor = self._conn.execute(
            "SELECT rowid, series, t_ns, value FROM series_samples WHERE rowid > ? ORDER BY rowid",
            (self._last_sample,),
        )
        table = np.fromiter(cursor, _SAMPLE_DTYPE)
        if len(table):
            self._last_sample = int(table["row"][-1])
            bad = (table["series"] < 0) | (table["series"] >= len(self.series))
            self._expect(not bad.any(), "a series sample refers to no series")
        return table["series"].copy(), table["t"].copy(), table["v"].copy()

    def _read_heat_samples(self, delta: PvtiDelta) -> None:
        ids, times = [], []
        for row, heatmap, t_ns, blob, dtype in self._conn.execute(
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


def _concat(parts: list[np.ndarray], stored: np.dtype, model: str) -> np.ndarray:
    if not parts:
        return np.zeros(0, np.dtype(model))
    out = np.concatenate(parts) if len(parts) > 1 else parts[0].copy()
    return out if stored == np.dtype(model) else out.astype(np.dtype(model))


def read_pvti(path: str | Path) -> PvtiContents:
    """The whole of the .pvti file ``path``: tables, event columns, series, heatmaps."""
    with PvtiReader(path) as reader:
        delta = reader.read_new()
        assert reader.meta is not None
        events = delta.events
        if len(delta.open_spans["start_ns"]):  # else no copy: a 10M-event trace is 330 MB
            events = {k: np.concatenate([events[k], delta.open_spans[k]]) for k in EVENT_COLUMNS}
        series = []
        order = np.argsort(delta.series_id, kind="stable")
        bounds = np.searchsorted(delta.series_id[order], np.arange(len(reader.series) + 1))
        for i, sdef in enumerate(reader.series):
            pick = order[bounds[i] : bounds[i + 1]]
            series.append((sdef, delta.series_t_ns[pick], delta.series_value[pick]))
        heatmaps = []
        for i, hdef in enumerate(reader.heatmaps):
            pick = np.flatnonzero(delta.heatmap_id == i)
            grid = np.zeros((len(pick), len(hdef.edges) + 1), np.int64)
            for row, j in enumerate(pick):
                grid[row] = delta.heatmap_counts[j]
            heatmaps.append((hdef, delta.heatmap_t_ns[pick], grid))
        return PvtiContents(
            reader.path,
            reader.meta,
            reader.processes,
            reader.threads,
            reader.channels,
            reader.labels,
            events,
            delta.args,
            series,
            heatmaps,
        )
