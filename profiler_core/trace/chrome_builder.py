"""Chrome Trace Event JSON's events, collected one at a time into columns and built into a
Trace: spans, instants, counters, async tracks, flows and metadata, as chrome://tracing and
Perfetto read them. An event that cannot be read is skipped and counted; ``chrome_import``
reads the file and hands the events here (``chrome_fast`` takes runs of plain ones in bulk).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.heap import release_free_memory
from profiler_core.trace import chrome_fields as fields
from profiler_core.trace.build import build_trace
from profiler_core.trace.chrome_columns import (
    ArgsText,
    Column,
    relative_ns,
    sort_in_walk_order,
)
from profiler_core.trace.chrome_fields import Skip
from profiler_core.trace.chrome_flows import FlowPoints, SpanColumns
from profiler_core.trace.chrome_tracks import Tracks
from profiler_core.trace.model import Trace
from profiler_core.trace.nesting import nesting_depths

#: Keys this project adds so that its own exports come back unchanged.
OPEN_ARG = fields.OPEN_ARG
KIND_ARG = "pvti_kind"
ORIGIN_KEY = "pvti_origin_wall_ns"
UNITS_KEY = "pvti_series_units"
GAPS_KEY = "pvti_series_gaps"  # series values an export left out (NaN, infinite)


_UNPLACED = {
    "N": "object events (N/O/D)",
    "O": "object events (N/O/D)",
    "D": "object events (N/O/D)",
    "P": "samples (P)",
}
_IGNORED = {"c", "V", "v"}  # clock sync and memory dumps: nothing to draw, nothing lost


class Builder:
    """Collects events one at a time, skipping and counting what cannot be read, then
    builds the Trace."""

    def __init__(self, path: Path, skipped: Counter) -> None:
        self.path = path
        self.skipped = skipped
        self.unplaced: Counter = Counter()
        self.ts = Column()  # µs as written
        self.end = Column()  # µs
        self.track = Column(np.int32)
        self.channel = Column(np.int32)
        self.label = Column(np.int32)
        self.kind = Column(np.uint8)
        self.arg_text: dict[int, str] = {}  # the per-event path's
        self.args_text = ArgsText()  # the fast path's
        self.tracks = Tracks()
        self.labels: dict[str, int] = {}
        self.channels: dict[str, int] = {}
        self.open_b: dict[int, list[tuple[float, str, str, dict | None, dict]]] = {}
        self.open_async: dict[int, list[tuple[float, str, str, dict | None]]] = {}
        self.counters: dict[tuple[Any, str], list[tuple[float, str, float]]] = {}
        self.flows = FlowPoints()
        self.flow_ts = Column()  # µs of each flow point, scaled with the rest

    # -- one event ---------------------------------------------------------------------

    def add(self, ev: Any) -> None:
        if ev == {}:  # catapult's writers end the array with {} to avoid a trailing comma
            return
        try:
            ph = fields.phase(ev)
            handler = _HANDLERS.get(ph)
            if handler is not None:
                handler(self, ev)
            elif ph in _UNPLACED:
                self.unplaced[_UNPLACED[ph]] += 1
            elif ph not in _IGNORED:
                self.unplaced[f"events of unknown phase {ph!r}"] += 1
        except Skip as reason:
            self.skipped[str(reason)] += 1

    def thread(self, ev: dict) -> int:
        pid = fields.ident(ev, "pid", 0)
        return self.tracks.thread(pid, fields.ident(ev, "tid", pid))  # no tid: the main track

    def row(self, track: int, ts: float, end: float, name: str, cat: str, kind: int,
            args: dict | None) -> int:  # fmt: skip
        self.ts.append(ts)
        self.end.append(end)
        self.track.append(track)
        self.channel.append(self.channels.setdefault(cat, len(self.channels)))
        self.label.append(self.labels.setdefault(name, len(self.labels)))
        self.kind.append(kind)
        if args:
            self.arg_text[len(self.ts) - 1] = json.dumps(args, separators=(",", ":"))
        return len(self.ts) - 1

    def complete(self, ev: dict) -> None:  # X
        ts, dur = fields.timestamp(ev), fields.number(ev, "dur")
        if dur < 0:
            raise Skip("negative 'dur'")
        if abs(ts + dur) > fields.MAX_MICROSECONDS * 1000:  # its end would not fit int64
            raise Skip("'dur' is out of range")
        args = fields.args(ev)
        kind = EventKind.OPEN if args and args.pop(OPEN_ARG, False) else EventKind.SPAN
        track = self.thread(ev)
        row = self.row(track, ts, ts + dur, fields.text(ev, "name"), fields.text(ev, "cat"),
                       kind, args)  # fmt: skip
        self.bind(ev, row)

    def begin(self, ev: dict) -> None:  # B
        track, ts = self.thread(ev), fields.timestamp(ev)
        name, cat = fields.text(ev, "name"), fields.text(ev, "cat")
        self.open_b.setdefault(track, []).append((ts, name, cat, fields.args(ev), ev))

    def finish(self, ev: dict) -> None:  # E
        track, ts = self.thread(ev), fields.timestamp(ev)
        stack = self.open_b.get(track)
        if not stack:
            raise Skip("'E' with no 'B'")
        start, name, cat, args, begin = stack.pop()
        if ts < start:
            raise Skip("'E' before its 'B'")
        merged = {**(args or {}), **(fields.args(ev) or {})}
        row = self.row(track, start, ts, name, cat, EventKind.SPAN, merged)
        self.bind(begin, row)
        self.bind(ev, row)

    def instant(self, ev: dict) -> None:  # i, I, R
        ts = fields.timestamp(ev)
        pid = fields.ident(ev, "pid", 0)
        scope = ev.get("s", "t") if ev.get("ph", "i")[0] != "R" else "g"
        if scope == "g":
            track = self.tracks.global_row(pid)
        elif scope == "p":
            track = self.tracks.process_row(pid)
        else:
            track = self.thread(ev)
        name, cat = fields.text(ev, "name"), fields.text(ev, "cat")
        self.row(track, ts, ts, name, cat, EventKind.INSTANT, fields.args(ev))

    def async_event(self, ev: dict) -> None:  # b e n (nestable), S T p F (legacy)
        ph, ts = ev["ph"][0], fields.timestamp(ev)
        pid = fields.ident(ev, "pid", 0)
        id_ = fields.flow_id(ev)
        if id_ is None:
            raise Skip("async event with no 'id'")
        name, cat = fields.text(ev, "name"), fields.text(ev, "cat")
        track = self.tracks.async_track(pid, cat, id_, name)
        if ph in "bS":
            self.open_async.setdefault(track, []).append((ts, name, cat, fields.args(ev)))
        elif ph in "eF":
            stack = self.open_async.get(track)
            if not stack:
                raise Skip(f"async '{ph}' with no begin")
            start, begin_name, begin_cat, args = stack.pop()
            if ts < start:
                raise Skip(f"async '{ph}' before its begin")
            merged = {**(args or {}), **(fields.args(ev) or {})}
            self.row(track, start, ts, begin_name, begin_cat, EventKind.SPAN, merged)
        else:  # n, T, p: a point on the async track
            self.row(track, ts, ts, name, cat, EventKind.INSTANT, fields.args(ev))

    def flow(self, ev: dict) -> None:  # s t f
        ts = fields.timestamp(ev)
        id_ = fields.flow_id(ev)
        if id_ is None:
            raise Skip("flow event with no 'id'")
        cat, track = fields.text(ev, "cat"), self.thread(ev)
        self.flows.add(cat, id_, ev["ph"][0], track, ev.get("bp") == "e")
        self.flow_ts.append(ts)

    def bind(self, ev: dict, row: int) -> None:
        """A span marked with ``bind_id`` and ``flow_in`` / ``flow_out`` ends flow arrows."""
        if "bind_id" not in ev:
            return
        bind_id = fields.ident(ev, "bind_id")
        self.flows.bind(bind_id, row, bool(ev.get("flow_in")), bool(ev.get("flow_out")))

    def counter(self, ev: dict) -> None:  # C
        ts = fields.timestamp(ev)
        pid = fields.ident(ev, "pid", 0)
        graph = fields.text(ev, "name")
        if "id" in ev:
            graph = f"{graph} {fields.text(ev, 'id')}"
        samples = self.counters.setdefault((pid, graph), [])
        for series, value in (fields.args(ev) or {}).items():
            try:
                samples.append((ts, series, fields.number({"v": value}, "v")))
            except Skip:
                self.skipped["counter values that are not numbers"] += 1

    def metadata(self, ev: dict) -> None:  # M
        name = fields.text(ev, "name")
        args = fields.args(ev) or {}
        pid = fields.ident(ev, "pid", 0)
        if name == "process_name":
            self.tracks.process_names[self.tracks.process(pid)] = fields.text(args, "name")
        elif name == "process_labels":  # Kineto: "CPU", "GPU 0" beside a shared name
            self.tracks.process_labels[self.tracks.process(pid)] = fields.text(args, "labels")
        elif name == "process_sort_index":
            self.tracks.process_sort[self.tracks.process(pid)] = fields.number(args, "sort_index")
        elif name == "thread_name":
            track = self.thread(ev)
            self.tracks.names[track] = fields.text(args, "name")
            if args.get(KIND_ARG) == "track":
                self.tracks.kinds[track] = "track"
        elif name == "thread_sort_index":
            self.tracks.thread_sort[self.thread(ev)] = fields.number(args, "sort_index")

    # -- result --------------------------------------------------------------------------

    def trace(self, origin: int, units: dict[str, str], notes: list[str]) -> Trace:
        highs = [c.max() for c in (self.end, self.ts, self.flow_ts)]
        last = max((h for h in highs if h is not None), default=0.0)
        unfinished = 0
        for stacks in (self.open_b, self.open_async):
            for track, stack in stacks.items():
                for ts, name, cat, args, *_ in stack:  # did not finish, as Chrome shows it
                    self.row(track, ts, max(last, ts), name, cat, EventKind.OPEN, args)
                    unfinished += 1
        points_us = self.flow_ts.array()
        # µs as the format says; a trace whose stamps only fit as ns (> 9.2e15) wrote ns
        highs = [abs(points_us).max()] if len(points_us) else []
        highs += [c.highest_abs() for c in (self.ts, self.end) if len(c)]
        scale = 1 if highs and max(highs) > fields.MAX_MICROSECONDS else 1000
        lows = [points_us.min()] if len(points_us) else []
        lows = [self.ts.lowest()] + lows if len(self.ts) else lows
        base = min(lows) if lows else 0
        if origin or base * scale < _EPOCH_NS:
            base = 0  # stamps relative to the trace's start (or to a known origin)
        else:  # epoch stamps: the trace starts at its first event, exactly
            origin = int(base) * scale + round((base - int(base)) * scale)
        # made ns a chunk at a time, one column at a time: the trace's peak is its columns
        start_ns = self.ts.relative_ns(base, scale)
        end_ns = self.end.relative_ns(base, scale)
        processes, threads, new_track = self.tracks.ordered(origin)
        cols = {
            "start_ns": start_ns,
            "end_ns": end_ns,
            "thread": self.track.looked_up(new_track),
            "channel": self.channel.array(),
            "label": self.label.array(),
            "kind": self.kind.array(),
        }
        release_free_memory()  # the columns' chunks, joined
        # Sorted once, where they are, in the order the nesting walk takes them: the depths
        # need no index of their own and the Trace is then sorted already.
        moved = sort_in_walk_order(cols)
        release_free_memory()  # the sort's and the float columns' temporaries
        cols["depth"] = nesting_depths(
            cols["thread"], cols["start_ns"], cols["end_ns"], in_walk_order=True
        )
        release_free_memory()
        flow_notes: list[str] = []
        flows = self.flows.arrows(
            SpanColumns(cols["thread"], cols["start_ns"], cols["end_ns"], cols["depth"],
                        np.isin(cols["kind"], (EventKind.SPAN, EventKind.OPEN))),
            relative_ns(points_us, base, scale), new_track, moved, self.skipped, flow_notes,
        )  # fmt: skip
        series = self._series(base, scale)
        args = self.args_text.into(self.arg_text, moved)
        del moved
        release_free_memory()  # where each event went, the args' and flows' temporaries
        return build_trace(
            cols,
            origin_wall_ns=origin,
            labels=list(self.labels),
            channels=list(self.channels),
            threads=threads,
            processes=processes,
            series=series,
            series_units={g: units.get(g, "") for g in series},
            args=args,
            flows=flows,
            warnings=self._warnings(unfinished, notes, flow_notes),
            in_place=True,
            tracks_in_order=True,
        )

    def _series(self, base: float, scale: float) -> dict[str, dict[str, tuple]]:
        pids_of: dict[str, set] = {}
        for pid, graph in self.counters:
            pids_of.setdefault(graph, set()).add(pid)
        series: dict[str, dict[str, tuple]] = {}
        for (pid, graph), samples in self.counters.items():
            name = graph if len(pids_of[graph]) == 1 else f"{graph} (pid {pid})"
            by_series: dict[str, list[tuple[float, float]]] = {}
            for ts, key, value in samples:
                ns = round((ts - base) * scale)
                if -(2**63) <= ns < 2**63:
                    by_series.setdefault(key, []).append((ns, value))
                else:  # the spans' and flows' stamps chose ns or µs; this one fits neither
                    self.skipped["counter samples out of range"] += 1
            series[name] = {key: _sorted_samples(got) for key, got in by_series.items()}
        return series

    def _warnings(self, unfinished: int, notes: list[str], flow_notes: list[str]) -> list[str]:
        name = self.path.name
        out = [f"{name}: {note}" for note in notes]
        if self.skipped:
            reasons = ", ".join(f"{n:,} {why}" for why, n in self.skipped.most_common())
            out.append(f"{name}: {sum(self.skipped.values()):,} event(s) skipped ({reasons})")
        out += [f"{name}: {note}" for note in flow_notes]
        if self.unplaced:
            kinds = ", ".join(f"{n:,} {what}" for what, n in self.unplaced.most_common())
            out.append(f"{name}: not shown: {kinds}")
        if unfinished:
            out.append(f"{name}: {unfinished:,} span(s) did not finish (no end event)")
        return out


#: stamps past this many ns after 1970 (~3 days) are wall-clock times, not trace-relative
_EPOCH_NS = 2.6e14


_HANDLERS = {
    "X": Builder.complete,
    "B": Builder.begin,
    "E": Builder.finish,
    "i": Builder.instant,
    "I": Builder.instant,
    "R": Builder.instant,
    "b": Builder.async_event,
    "e": Builder.async_event,
    "n": Builder.async_event,
    "S": Builder.async_event,
    "T": Builder.async_event,
    "p": Builder.async_event,
    "F": Builder.async_event,
    "s": Builder.flow,
    "t": Builder.flow,
    "f": Builder.flow,
    "C": Builder.counter,
    "M": Builder.metadata,
}


def _sorted_samples(samples: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    t = np.array([s[0] for s in samples], np.int64)
    v = np.array([s[1] for s in samples], np.float64)
    order = np.argsort(t, kind="stable")
    return t[order], v[order]
