"""A run of plain Chrome events decoded into ``json_typed.TraceEvent`` structs, read a field
at a time for ``chrome_run_columns``. Their args stay the JSON text the file holds (raw
bytes, whitespace and all): ``EventArgs`` makes an event's compact text when it is asked
for it, the text the per-event path makes (so a million args cost no decode and no
encode while the trace opens)."""

from __future__ import annotations

import json

import numpy as np

from profiler_core.trace import chrome_fields as fields
from profiler_core.trace import chrome_run_columns as columns
from profiler_core.trace.chrome_columns import ArgsText
from profiler_core.trace.chrome_run_columns import Rows

#: a list comprehension per field: its attribute loads are specialised by the interpreter,
#: ~25% faster than map(attrgetter(name), events) over a chunk's structs
_GET = {
    "ph": lambda events: [ev.ph for ev in events],
    "name": lambda events: [ev.name for ev in events],
    "cat": lambda events: [ev.cat for ev in events],
    "ts": lambda events: [ev.ts for ev in events],
    "dur": lambda events: [ev.dur for ev in events],
    "pid": lambda events: [ev.pid for ev in events],
    "tid": lambda events: [ev.tid for ev in events],
    "id": lambda events: [ev.id for ev in events],
    "bp": lambda events: [ev.bp for ev in events],
    "args": lambda events: [ev.args for ev in events],
    "bind_id": lambda events: [ev.bind_id for ev in events],
}
_QUOTE, _OPEN, _NULL = ord('"'), ord("{"), ord("n")
#: a key that is the open-span marker is written so, or with a \u escape in it
_OPEN_KEY = fields.OPEN_ARG.encode()


def values(events: list, name: str) -> list:
    """Field ``name`` of every event (TraceEvent's defaults where the event has none)."""
    return _GET[name](events)


class RawArgs:
    """A run's args objects as the file writes them: event ``at[k]`` (in the run) has
    ``text[starts[k]:starts[k] + lengths[k]]``."""

    def __init__(self, at: np.ndarray, lengths: np.ndarray, text: bytes) -> None:
        self.at, self.lengths, self.text = at, lengths, text

    @classmethod
    def of(cls, raws: list) -> RawArgs | None:
        """The args of a run from each event's raw ``args`` (empty where absent); None when
        one is not what the fast path keeps as is: an args that is not an object (the
        per-event path wraps it) or that marks an open span."""
        lengths = np.fromiter(map(len, raws), np.int64, len(raws))
        at = np.flatnonzero(lengths)
        if not len(at):
            return cls(at, lengths[at], b"")
        text = b"".join(raws)  # an absent args adds nothing
        data = np.frombuffer(text, np.uint8)
        lengths = lengths[at]
        starts = np.cumsum(lengths) - lengths
        first = data[starts]
        objects = first == _OPEN
        if not (objects | (first == _NULL)).all():
            return None
        # an object with a key holds a quote; one without is {} (no args, as null)
        kept = objects & np.add.reduceat(data == _QUOTE, starts).astype(bool)
        if _OPEN_KEY in text or (b"\\" in text and b"\\u" in text):  # memchr first
            for k in np.flatnonzero(kept).tolist():
                raw = text[starts[k] : starts[k] + lengths[k]]
                if (_OPEN_KEY in raw or b"\\u" in raw) and fields.OPEN_ARG in json.loads(raw):
                    return None
        if kept.all():
            return cls(at, lengths, text)
        return cls(at[kept], lengths[kept], b"".join(raws[i] for i in at[kept].tolist()))

    def add(self, out: ArgsText, first: int) -> None:
        out.add_raw(first + self.at, self.lengths, self.text)


def rows(events: list, phases: list[str], pid: list, tid: list) -> Rows | None:
    """The rows of X/i/I ``events`` (whose ``ids`` are ``pid``, ``tid``) as columns; None
    when one of them is not plain."""
    spans = [ph == "X" for ph in phases]
    all_spans = all(spans)
    if any(map(len, values(events, "bind_id"))):
        return None
    if all_spans:
        dur = values(events, "dur")
    else:
        dur = [ev.dur if x else 0 for ev, x in zip(events, spans, strict=True)]
        if not all(x or ev.s not in ("g", "p") for ev, x in zip(events, spans, strict=True)):
            return None
    args = RawArgs.of(values(events, "args"))
    if args is None:
        return None
    return columns.rows(values(events, "ts"), dur, pid, tid, None if all_spans else spans,
                        values(events, "name"), values(events, "cat"), args)  # fmt: skip


def ids(events: list) -> tuple[list, list]:
    """Each event's pid and tid (NO_TID where it has none)."""
    return values(events, "pid"), values(events, "tid")


def flow_points(events: list, pid: list, tid: list) -> tuple | None:
    """``chrome_run_columns.flow_points`` of flow events decoded into structs."""
    return columns.flow_points(
        values(events, "ts"),
        values(events, "id"),
        values(events, "cat"),
        pid,
        tid,
        values(events, "ph"),
        [bp == "e" for bp in values(events, "bp")],
    )
