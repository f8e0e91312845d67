"""Build Trace models: sort raw event columns, and merge .pvti files onto one time axis."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import PvtiContents
from profiler_core.formats.pvti.schema import MAX_TIME_NS
from profiler_core.trace.model import Heatmap, Process, SeriesMap, Thread, Trace

EVENT_FIELDS = ("start_ns", "end_ns", "depth", "thread", "channel", "label", "kind")
_DTYPES = {
    "start_ns": np.int64,
    "end_ns": np.int64,
    "depth": np.int32,
    "thread": np.int32,
    "channel": np.int32,
    "label": np.int32,
    "kind": np.uint8,
}


def build_trace(
    columns: dict[str, np.ndarray],
    *,
    origin_wall_ns: int,
    labels: Sequence[str],
    channels: Sequence[str],
    threads: Sequence[Thread],
    processes: Sequence[Process],
    series: SeriesMap | None = None,
    series_units: dict[str, str] | None = None,
    heatmaps: dict[str, Heatmap] | None = None,
    args: Mapping[int, str] | None = None,
    flows: np.ndarray | None = None,
    warnings: Sequence[str] = (),
    in_place: bool = False,
    tracks_in_order: bool = False,
) -> Trace:
    """A Trace from unsorted event columns (times already relative to ``origin_wall_ns``).

    With ``in_place`` the columns given (already in the model's dtypes) are sorted where
    they are and become the Trace's: loading then needs little more than their memory.
    """
    cols = {k: np.asarray(columns[k], dtype=_DTYPES[k]) for k in EVENT_FIELDS}
    if not in_place:
        cols = {k: v.copy() for k, v in cols.items()}
    order = _sort_in_place(cols)
    flows = np.zeros((0, 2), np.int64) if flows is None else np.asarray(flows, np.int64)
    if order is not None and (args or len(flows)):
        moved = _new_positions(order, len(order))
        args = {int(moved[i]): text for i, text in (args or {}).items()}
        flows = moved[flows]
    offsets = np.searchsorted(cols["thread"], np.arange(len(threads) + 1), side="left")
    return Trace(
        origin_wall_ns=int(origin_wall_ns),
        **cols,
        labels=tuple(labels),
        channels=tuple(channels),
        threads=tuple(threads),
        processes=tuple(processes),
        thread_offsets=offsets.astype(np.int64),
        series=series or {},
        series_units=series_units or {},
        heatmaps=heatmaps or {},
        args=args or {},
        flows=flows,
        warnings=tuple(warnings),
        tracks_in_order=tracks_in_order,
    )


def _sort_in_place(cols: dict[str, np.ndarray]) -> np.ndarray | None:
    """Sort ``cols`` by (thread, start, depth) where they are; the order applied, or None
    when they were sorted already (a re-opened export costs one comparison pass)."""
    thread, start, depth = cols["thread"], cols["start_ns"], cols["depth"]
    n = len(start)
    if n < 2 or _is_sorted(thread, start, depth):
        return None
    order = np.lexsort((depth, start, thread))
    if n < 2**31:  # half the index memory; the sort's peak is the columns plus one index
        order = order.astype(np.int32)
    for column in cols.values():
        column[...] = column[order]  # one column-sized temporary at a time
    return order


def _new_positions(order: np.ndarray, n: int) -> np.ndarray:
    """Where each old event index went (``order``'s inverse)."""
    moved = np.empty(n, np.int64)
    moved[order] = np.arange(n, dtype=np.int64)
    return moved


def _is_sorted(thread: np.ndarray, start: np.ndarray, depth: np.ndarray) -> bool:
    """Whether the events are in (thread, start, depth) order, a block at a time (its masks
    stay a few MB, not a handful of column-sized ones)."""
    for a in range(0, len(start) - 1, _CHECK_BLOCK):
        rows = slice(a, a + _CHECK_BLOCK + 1)
        if not _block_sorted(thread[rows], start[rows], depth[rows]):
            return False
    return True


_CHECK_BLOCK = 1 << 18


def _block_sorted(thread: np.ndarray, start: np.ndarray, depth: np.ndarray) -> bool:
    same_thread = thread[1:] == thread[:-1]
    if (thread[1:] < thread[:-1]).any():
        return False
    later = start[1:] > start[:-1]
    tied = start[1:] == start[:-1]
    ok = ~same_thread | later | (tied & (depth[1:] >= depth[:-1]))
    return bool(ok.all())


class _Names:
    """Global ids for strings met across several files."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def remap(self, names: Sequence[str]) -> np.ndarray:
        return np.array([self.ids.setdefault(n, len(self.ids)) for n in names], dtype=np.int32)

    def names(self) -> list[str]:
        return list(self.ids)


def _remapped(new_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``new_ids[ids]``, or ``ids`` itself when the mapping is the identity (the first file)."""
    if np.array_equal(new_ids, np.arange(len(new_ids))):
        return ids
    return new_ids[ids]


def _check_shift(f: PvtiContents, shift: int) -> None:
    """Shifting ``f``'s times onto the trace clock must stay in int64 (numpy would wrap)."""
    times = [ev for ev in (f.events["start_ns"], f.events["end_ns"]) if len(ev)]
    times += [t for _, t, _ in f.series if len(t)] + [t for _, t, _ in f.heatmaps if len(t)]
    for t in times:
        low, high = int(t.min()) + shift, int(t.max()) + shift
        if max(abs(low), abs(high)) >= MAX_TIME_NS:
            raise ReportError(
                f.path,
                "event times cannot be placed on the trace clock (its origin or times are "
                f"out of range: {low}..{high} ns)",
            )


def trace_from_pvti(files: Sequence[PvtiContents], *, in_place: bool = False) -> Trace:
    """One Trace of one or several .pvti files, aligned by their wall-clock origins.

    With ``in_place`` a single file's event columns are shifted and sorted where they are
    and become the Trace's (the loaders' way: no column-sized copies).
    """
    origin = min(f.meta.origin_wall_ns for f in files)
    labels, channels = _Names(), _Names()
    parts: dict[str, list[np.ndarray]] = {k: [] for k in EVENT_FIELDS}
    threads: list[Thread] = []
    processes: list[Process] = []
    series: SeriesMap = {}
    units: dict[str, str] = {}
    heatmaps: dict[str, Heatmap] = {}
    args: dict[int, str] = {}
    n_events = 0
    for f in sorted(files, key=lambda f: (f.meta.origin_wall_ns, f.meta.pid)):
        # file time t (its monotonic ns) -> trace time: t - mono_origin + (wall - origin)
        shift = f.meta.origin_wall_ns - origin - f.meta.origin_monotonic_ns
        ev = f.events
        _check_shift(f, shift)
        for name in ("start_ns", "end_ns"):
            if in_place and len(files) == 1:
                ev[name] += shift
                parts[name].append(ev[name])
            else:
                parts[name].append(ev[name] + shift)
        parts["depth"].append(ev["depth"])
        parts["kind"].append(ev["kind"])
        parts["thread"].append(ev["thread"] + len(threads) if threads else ev["thread"])
        parts["label"].append(_remapped(labels.remap(f.labels), ev["label"]))
        parts["channel"].append(_remapped(channels.remap(f.channels), ev["channel"]))
        args.update({n_events + i: text for i, text in f.args.items()})
        n_events += len(ev["start_ns"])
        base = len(processes)
        threads += [Thread(t.name, base + t.process, t.os_tid, t.kind) for t in f.threads]
        processes += [
            Process(p.pid, p.hostname, p.name, f.meta.origin_wall_ns) for p in f.processes
        ]
        for sdef, t, values in f.series:
            graph = series.setdefault(sdef.graph, {})
            name = sdef.name if sdef.name not in graph else f"{sdef.name} (pid {f.meta.pid})"
            graph[name] = (t + shift, values)
            units.setdefault(sdef.graph, sdef.unit)
        for hdef, t, counts in f.heatmaps:
            name = hdef.name if hdef.name not in heatmaps else f"{hdef.name} (pid {f.meta.pid})"
            heatmaps[name] = Heatmap(name, hdef.unit, hdef.edges, t + shift, counts)
    # One file (the usual case): its columns as they are, not a concatenated copy.
    columns = {
        k: (v[0] if len(v) == 1 else np.concatenate(v)) if v else np.zeros(0)
        for k, v in parts.items()
    }
    return build_trace(
        columns,
        origin_wall_ns=origin,
        labels=labels.names(),
        channels=channels.names(),
        threads=threads,
        processes=processes,
        series=series,
        series_units=units,
        heatmaps=heatmaps,
        args=args,
        warnings=[f"{f.path.name}: incomplete: {f.incomplete}" for f in files if f.incomplete],
        in_place=in_place or len(files) > 1,  # several files: the columns are new already
    )
