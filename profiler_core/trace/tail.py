"""TraceTail: follow a .pvti file while another process writes it, reading only new rows.

Each ``poll()`` runs one read transaction that fetches batch rows, samples and
dictionary rows with ids above the last ones seen (WAL lets this run beside the writer)
and returns just the new columns, ready to append to what a view already shows. What was
read is kept as sorted pieces (``TracePieces``): a poll's work follows its new events, not
the recording so far, and ``pieces_snapshot()`` hands them out without joining them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from profiler_core.formats.pvti import PvtiReader
from profiler_core.formats.pvti.reader import PvtiNotStartedError
from profiler_core.model.growing import GrowingRows
from profiler_core.trace.build import EVENT_FIELDS, build_trace
from profiler_core.trace.model import Heatmap, Process, SeriesMap, Thread, Trace
from profiler_core.trace.pieces import PiecedTrace, TracePieces


def _empty_columns() -> dict[str, np.ndarray]:
    return {k: np.zeros(0, np.int64) for k in EVENT_FIELDS}


@dataclass
class TailUpdate:
    """What one poll found. Times are ns relative to the tail's ``origin_wall_ns``."""

    events: dict[str, np.ndarray] = field(default_factory=_empty_columns)  # new, finished
    open_spans: dict[str, np.ndarray] = field(default_factory=_empty_columns)  # all, now
    series: SeriesMap = field(default_factory=dict)  # new samples only

    @property
    def n_events(self) -> int:
        return len(self.events["start_ns"])


class TraceTail:
    """Incremental reader of one .pvti file; ``pieces_snapshot()`` (cheap) and ``snapshot()``
    (one joined Trace) give all read so far."""

    def __init__(
        self,
        path: str | Path,
        *,
        background_merges: bool = False,
        prepare: Callable[[Trace], None] | None = None,
    ) -> None:
        """``background_merges`` and ``prepare``: as ``TracePieces``'s ``background`` and
        ``prepare`` (a live view: no poll waits for a big merge, each piece is made ready
        to draw by the thread that made it)."""
        self.path = Path(path)
        self._reader: PvtiReader | None = None
        self.pieces = TracePieces(background=background_merges, prepare=prepare)
        self._committed = 0  # events read so far (the args' positions count from here)
        self._open = _empty_columns()
        self._series: dict[tuple[str, str], tuple[GrowingRows, GrowingRows]] = {}
        self._heat: dict[int, tuple[GrowingRows, GrowingRows]] = {}  # (t, counts) per heatmap
        self._shift = 0
        self.origin_wall_ns = 0
        #: The writer's monotonic clock at time 0 (add it to get back the writer's clock).
        self.origin_monotonic_ns = 0

    @property
    def started(self) -> bool:
        """Whether the writer has committed the file's tables yet."""
        return self._reader is not None and self._reader.meta is not None

    def poll(self) -> TailUpdate:
        """Events, open spans and samples committed since the previous poll."""
        if self._reader is None:
            if not self.path.exists() or self.path.stat().st_size == 0:
                return TailUpdate()  # the writer has not created the file yet
            self._reader = PvtiReader(self.path)
        try:
            delta = self._reader.read_new()
        except PvtiNotStartedError:
            return TailUpdate()
        meta = self._reader.meta
        assert meta is not None
        self.origin_wall_ns = meta.origin_wall_ns
        self.origin_monotonic_ns = meta.origin_monotonic_ns
        self._shift = -meta.origin_monotonic_ns
        update = TailUpdate(
            events=self._shifted(delta.events), open_spans=self._shifted(delta.open_spans)
        )
        n = update.n_events
        args = {k - self._committed: text for k, text in delta.args.items()
                if self._committed <= k < self._committed + n}  # fmt: skip
        self.pieces.append(update.events, self._tables(), args)
        self._committed += n
        self._open = update.open_spans
        for sid in np.unique(delta.series_id).tolist():
            sdef = self._reader.series[sid]
            pick = delta.series_id == sid
            sample = (delta.series_t_ns[pick] + self._shift, delta.series_value[pick])
            update.series.setdefault(sdef.graph, {})[sdef.name] = sample
            key = (sdef.graph, sdef.name)
            if key not in self._series:
                self._series[key] = (GrowingRows(np.int64), GrowingRows(np.float64))
            for rows, new in zip(self._series[key], sample, strict=True):
                rows.append(new)
        for hid, t, counts in zip(
            delta.heatmap_id.tolist(),
            delta.heatmap_t_ns.tolist(),
            delta.heatmap_counts,
            strict=True,
        ):
            if hid not in self._heat:
                buckets = len(self._reader.heatmaps[hid].edges) + 1
                self._heat[hid] = (GrowingRows(np.int64), GrowingRows(np.int64, (buckets,)))
            self._heat[hid][0].append([t + self._shift])
            self._heat[hid][1].append([counts])
        return update

    def _shifted(self, cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = dict(cols)
        out["start_ns"] = cols["start_ns"] + self._shift
        out["end_ns"] = cols["end_ns"] + self._shift
        return out

    def snapshot(self) -> Trace:
        """A Trace of everything read so far, open spans included."""
        return self.pieces_snapshot().whole()

    def pieces_snapshot(self) -> PiecedTrace:
        """Everything read so far as the sorted pieces (shared, not copied) plus one of the
        spans open now, which carries the names, series and heatmaps."""
        reader = self._reader
        if reader is None or reader.meta is None:
            return PiecedTrace((self._tables(),))
        series: SeriesMap = {}
        units: dict[str, str] = {}
        for sdef in reader.series:
            found = self._series.get((sdef.graph, sdef.name))
            t, v = (found[0].view(), found[1].view()) if found else (np.zeros(0, np.int64),
                                                                     np.zeros(0))  # fmt: skip
            series.setdefault(sdef.graph, {})[sdef.name] = (t, v)
            units.setdefault(sdef.graph, sdef.unit)
        heatmaps = {}
        for i, hdef in enumerate(reader.heatmaps):
            heat = self._heat.get(i)
            t = heat[0].view() if heat else np.zeros(0, np.int64)
            counts = heat[1].view() if heat else np.zeros((0, len(hdef.edges) + 1), np.int64)
            heatmaps[hdef.name] = Heatmap(hdef.name, hdef.unit, hdef.edges, t, counts)
        open_spans = self._tables(self._open, series=series, series_units=units, heatmaps=heatmaps)
        return PiecedTrace((*self.pieces.pieces, open_spans))

    def _tables(self, columns: dict[str, np.ndarray] | None = None, **extra: object) -> Trace:
        """A Trace of ``columns`` (none by default) named with the file's tables so far."""
        reader = self._reader
        if reader is None or reader.meta is None:
            return build_trace(
                _empty_columns(), origin_wall_ns=0, labels=[], channels=[], threads=[], processes=[]
            )
        meta = reader.meta
        return build_trace(
            dict(columns if columns is not None else _empty_columns()),
            origin_wall_ns=meta.origin_wall_ns,
            labels=reader.labels,
            channels=reader.channels,
            threads=[Thread(t.name, t.process, t.os_tid, t.kind) for t in reader.threads],
            processes=[
                Process(p.pid, p.hostname, p.name, meta.origin_wall_ns) for p in reader.processes
            ],
            **extra,  # type: ignore[arg-type]
        )

    def close(self) -> None:
        self.pieces.finish()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> TraceTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
