"""The recording half of the ``.pvti`` writer: events kept in memory until a commit, and
turned into a commit's rows (``batch.py`` and ``commit.py`` lay them out). The writer
(``writer.py``) owns the file, the flusher thread and when to commit."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from profiler_core.formats.pvti.batch import (
    RECORD_FIELDS,
    Interner,
    columns_from_records,
    drop_completed_spans,
    span_keys,
    split_columns,
)
from profiler_core.formats.pvti.commit import PendingCommit
from profiler_core.formats.pvti.ring import RecordRing, ring_columns, ring_span_keys
from profiler_core.formats.pvti.schema import MAX_BATCH_EVENTS, EventKind

#: Returns the spans open right now as (thread_key, channel, label, start_ns, depth).
OpenSpansSource = Callable[[], Iterable[tuple[Any, str, str, int, int]]]


class EventBuffer:
    """What a ``PvtiWriter`` has recorded and not yet committed: the tracepoints' records
    in the ``ring`` (appended by C), events given one by one as flat records (``add_span``,
    ``add_instant``: they alone carry args), spans given in bulk, metric and
    heatmap samples, and the dictionaries (threads, channels, labels, series, heatmaps)
    interned as they appear. ``_collect`` turns all of it into one commit's rows."""

    #: OS thread id -> name (the writer's); the recording methods check the writer is open
    #: and call its ``relieve`` when too much is pending.
    thread_names: dict[int, str]
    open_spans_source: OpenSpansSource | None
    _lock: threading.RLock

    def __init__(self, max_pending_events: int) -> None:
        #: Events recorded after a write error, never written.
        self.dropped_events = 0
        #: Commits a recording thread made itself because too many events were pending.
        self.backpressure_commits = 0
        self.max_pending_events = max_pending_events
        #: ``add_span``/``add_instant`` commit (``relieve()``) once ``len(records_buffer)``
        #: passes this.
        self.pending_limit = max_pending_events * RECORD_FIELDS

        self._records: list = []
        #: The tracepoints' hot path: fixed-size records appended to a preallocated ring.
        self.ring = RecordRing(max_pending_events, self.relieve)
        #: The flat record list ``record`` extends.
        self.records_buffer: list = self._records
        #: Extends it with one RECORD_FIELDS-tuple per event (see batch.py).
        self.record: Callable[[tuple], None] = self._records.extend
        self._samples: list[tuple[str, str, str, int, float]] = []
        self._heat_samples: list[tuple[str, int, np.ndarray]] = []
        self._bulk: list[dict[str, np.ndarray]] = []
        self._threads, self._channels, self._labels = Interner(), Interner(), Interner()
        self._series, self._heatmaps = Interner(), Interner()
        self._series_units: dict[tuple[str, str], str] = {}
        self._heatmap_defs: dict[str, tuple[str, np.ndarray]] = {}
        self._last_open: list = []

    def _check_open(self) -> None:
        raise NotImplementedError

    def relieve(self) -> None:
        raise NotImplementedError

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

    def _drop_pending(self) -> None:
        """After a write error: forget what was recorded, counting it as lost."""
        self.dropped_events += len(self._take(self._records)) // RECORD_FIELDS
        self.dropped_events += len(self.ring.take())
        self.dropped_events += len(self._take(self._samples)) + len(self._take(self._heat_samples))
        bulk, self._bulk = self._bulk, []
        self.dropped_events += sum(len(cols["start_ns"]) for cols in bulk)

    def _take(self, buffer: list) -> list:
        # Other threads only ever append, so everything before len() is ours to take.
        n = len(buffer)
        taken = buffer[:n]
        del buffer[:n]
        return taken

    def _open_spans(self, late: list, late_ring: np.ndarray) -> list[tuple]:
        """Spans open as of this commit: a span that ended after its records were taken and
        before the open spans were listed is in neither, so the ``late`` records count."""
        spans = list(self.open_spans_source()) if self.open_spans_source else []
        seen = {(s[0], s[3], s[4]) for s in spans}
        for span in span_keys(late) + ring_span_keys(late_ring):
            if (span[0], span[3], span[4]) not in seen:
                spans.append(span)
        return spans

    def _collect(self) -> PendingCommit | None:
        """Take everything recorded so far and turn it into rows, or None if nothing new."""
        ring = self.ring.take()
        records = self._take(self._records)
        # Snapshot the open spans after taking the records: a span that ended in between
        # is in neither, so the records that arrived meanwhile (`late`) are counted open.
        late, late_ring = list(self._records), self.ring.peek()
        open_spans = self._open_spans(late, late_ring)
        as_of = time.monotonic_ns()
        samples = self._take(self._samples)
        heat = self._take(self._heat_samples)
        bulk, self._bulk = self._bulk, []
        if not (records or len(ring) or samples or heat or bulk) and (
            open_spans == self._last_open
        ):
            return None
        pending = PendingCommit(open_spans)
        if records or len(ring):
            pending.batches.append(self._recorded_batch(ring, records))
        for cols in bulk:
            pending.batches += [(p, {}) for p in split_columns(cols, MAX_BATCH_EVENTS)]
        pending.open_rows = [
            (self._threads.id(t), self._channels.id(c), self._labels.id(lab), s, d, as_of)
            for t, c, lab, s, d in open_spans
        ]
        if (records or len(ring)) and pending.open_rows:
            pending.open_rows = drop_completed_spans(pending.open_rows, pending.batches[0][0])
        for graph, unit, series, t, value in samples:
            self._series_units.setdefault((graph, series), unit)
            pending.series_rows.append((self._series.id((graph, series)), t, value))
        pending.heat_rows = [
            (self._heatmaps.id(name), t, counts.astype("<u4").tobytes(), "<u4")
            for name, t, counts in heat
        ]
        return pending

    def _recorded_batch(self, ring: np.ndarray, records: list) -> tuple[dict, dict[int, str]]:
        """One batch of the ring's records then the list's (which alone carry args)."""
        interners = (self._threads, self._channels, self._labels)
        if not records:
            return ring_columns(ring, *interners), {}
        cols, args = columns_from_records(records, *interners)
        if not len(ring):
            return cols, args
        first = ring_columns(ring, *interners)
        joined = {name: np.concatenate((first[name], cols[name])) for name in cols}
        return joined, {len(ring) + i: text for i, text in args.items()}

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
