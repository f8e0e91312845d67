"""The events of a Chrome Trace Event JSON file, streamed a chunk of bytes at a time.

Chrome's trace viewer and Perfetto open traces that are not strict JSON: a file cut short
(no final ``]``), trailing commas, a trailing ``{}``, a gzip stream. So the file is never
parsed whole: a numpy scan of each chunk finds the objects of the ``traceEvents`` array
(outside strings, at the array's depth), complete events are parsed together with
``json.loads`` and handed on, and what cannot be parsed is skipped and counted -- one bad
event never refuses the file. Only the partial event at the end of a chunk is carried over,
so memory holds one chunk, not the document.

A chunk is parsed by ``json_parse.loads``: orjson where it reads the text as ``json.loads``
does, the standard library elsewhere. Asked for ``typed`` events, a chunk is decoded by
msgspec into ``json_typed.TraceEvent`` structs instead (no dict per event) wherever msgspec
reads it as ``json.loads`` would; any other chunk is still parsed into dicts. Asked for
``native`` events, a chunk is first offered to the C kernel (``chrome_native``), which reads
its common events straight into columns or leaves the chunk to the paths above.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.trace import chrome_native
from profiler_core.trace.json_guard import DEFAULT_MAX_DEPTH, drop_escaped_quotes
from profiler_core.trace.json_limits import MAX_TRACE_BYTES, LimitedReader, open_trace
from profiler_core.trace.json_parse import loads
from profiler_core.trace.json_typed import TypedEvents, decode

#: a chunk's parsed events (~7x its bytes as dicts) stay in the CPU's caches while they are
#: read field by field: 4 MB chunks' ~28 MB did not, and a 1M-event file took ~17% longer
CHUNK_BYTES = 256 << 10
#: the native kernel makes no object per event: its per-chunk calls are what a chunk costs,
#: so it reads 1 MB at a time (a chunk it refuses is read as before, 1 MB of it)
NATIVE_CHUNK_BYTES = 1 << 20

# Byte classes: 0 other, 1 quote, 2 opener, 3 closer, 4 backslash, 5 colon, 6 comma.
_CLASS = np.zeros(256, np.uint8)
_CLASS[ord('"')] = 1
_CLASS[[ord("["), ord("{")]] = 2
_CLASS[[ord("]"), ord("}")]] = 3
_CLASS[ord("\\")] = 4
_CLASS[ord(":")] = 5
_CLASS[ord(",")] = 6
_WHITESPACE = b" \t\r\n\xef\xbb\xbf"


@dataclass
class EventStream:
    """What reading the file found besides its events: the document's other keys and
    the problems met (how many events were skipped, and why)."""

    path: Path
    doc: dict[str, Any] = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)  # reason -> events
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Structure:
    """The structural bytes of a buffer outside strings: position, byte, depth before it."""

    pos: np.ndarray
    byte: np.ndarray
    depth: np.ndarray  # nesting before the byte


def _scan(buf: bytes | memoryview, depth0: int) -> _Structure:
    """Structure of ``buf``, which must start outside a string at nesting ``depth0``."""
    data = np.frombuffer(buf, np.uint8)
    code = _CLASS[data]
    if (code == 4).any():
        code, _ = drop_escaped_quotes(code, 0)
    at = np.flatnonzero((code != 0) & (code != 4))
    kinds = code[at]
    quote = kinds == 1
    outside = (np.cumsum(quote) - quote) % 2 == 0
    keep = outside & ~quote
    at, kinds = at[keep], kinds[keep]
    step = (kinds == 2).astype(np.int64) - (kinds == 3)
    depth = depth0 + np.cumsum(step) - step
    return _Structure(at, data[at], depth)


def _scan_brackets(buf: bytes, depth0: int) -> _Structure:
    """``_scan`` of the brackets only (no colons or commas): what finds the events and their
    nesting, in a fifth of the time -- quotes are located, not walked, and a bracket is
    outside strings when an even number of real quotes precede it."""
    data = np.frombuffer(buf, np.uint8)
    if b"\\" in buf:  # escaped quotes are not quotes: classed as _scan classes them
        code, _ = drop_escaped_quotes(_CLASS[data], 0)
        quotes = np.flatnonzero(code == 1)
        at = np.flatnonzero((code == 2) | (code == 3))
    else:
        quotes = np.flatnonzero(data == ord('"'))
        at = np.flatnonzero(
            (data == ord("{")) | (data == ord("}")) | (data == ord("[")) | (data == ord("]"))
        )
    at = at[np.searchsorted(quotes, at) % 2 == 0]
    byte = data[at]
    step = ((byte == ord("{")) | (byte == ord("["))).astype(np.int64) * 2 - 1
    depth = depth0 + np.cumsum(step) - step
    return _Structure(at, byte, depth)


def read_events(
    path: Path,
    stream: EventStream,
    *,
    max_bytes: int = MAX_TRACE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    chunk_bytes: int | None = None,
    typed: bool = False,
    native: bool = False,
) -> Iterator[Any]:
    """The events of ``path``, a list per chunk, in file order; ``stream`` collects the
    document's other keys and what was skipped. With ``typed``, a chunk msgspec reads is a
    ``TypedEvents`` of structs, any other a list of dicts; with ``native`` too, a chunk the
    C kernel reads is a ``chrome_native.NativeEvents`` (columns)."""
    with open_trace(path) as raw:
        reader = LimitedReader(raw, path, max_bytes)
        if chunk_bytes is None:
            chunk_bytes = NATIVE_CHUNK_BYTES if native else CHUNK_BYTES
        yield from _Events(reader, stream, max_depth, chunk_bytes, typed, native).run()


class _Events:
    def __init__(self, reader: LimitedReader, stream: EventStream, max_depth: int, chunk: int,
                 typed: bool, native: bool = False) -> None:  # fmt: skip
        self.reader, self.stream = reader, stream
        self.max_depth, self.chunk, self.typed = max_depth, chunk, typed
        self.native = chrome_native.NativeReader(max_depth) if native else None
        self.outside = bytearray()  # the document's bytes outside the events array

    def run(self) -> Iterator[list[Any]]:
        buf, depth = self._find_array()
        if depth < 0:
            return
        ended = False
        eof = False
        while not ended:
            # an event bigger than a chunk doubles the read: each byte is scanned ~twice,
            # not once per chunk that the event spans
            more = b"" if eof else self.reader.read(max(self.chunk, len(buf)))
            eof = eof or not more
            buf += more
            events, rest, ended = self._complete_events(buf, depth, eof)
            if events:
                yield events
            buf = rest
            if eof and not ended:
                if buf.strip(_WHITESPACE + b",]}"):
                    self.stream.skipped["the file ends inside an event"] += 1
                else:
                    self.stream.notes.append("the file ends before the events array is closed")
                break
        if self.outside:  # the object form: its other keys (displayTimeUnit, otherData)
            self.outside += b"[]" + (buf + self.reader.read_rest() if ended else b"")
            self._parse_document()

    # -- the array's start -----------------------------------------------------------------

    def _find_array(self) -> tuple[bytes, int]:
        """The bytes after the events array's ``[`` and the depth of its events; -1 when
        the file holds no events array."""
        buf = b""
        while True:
            more = self.reader.read(max(self.chunk, len(buf)))
            buf += more
            head = buf.lstrip(_WHITESPACE)
            if not head:
                if more:
                    continue
                raise ReportError(self.stream.path, "empty file: not a JSON trace")
            if head[:1] == b"[":
                start = len(buf) - len(head)
                return buf[start + 1 :], 1
            if head[:1] != b"{":
                raise ReportError(self.stream.path, "not JSON: a Chrome trace starts with { or [")
            found = self._traceevents_key(buf)
            if found is not None:
                self.outside += buf[:found]
                return buf[found + 1 :], 2
            if not more:
                raise ReportError(
                    self.stream.path, "JSON object has no 'traceEvents' array: not a Chrome trace"
                )

    def _traceevents_key(self, buf: bytes) -> int | None:
        """Where the ``[`` of the top object's "traceEvents" value is, if in ``buf``."""
        start = len(buf) - len(buf.lstrip(_WHITESPACE))
        s = _scan(memoryview(buf)[start:], 0)
        top = (s.depth == 1) & ((s.byte == ord("[")) | (s.byte == ord("{")))
        for i in np.flatnonzero(top):
            before = s.pos[:i][(s.depth[:i] == 1) & np.isin(s.byte[:i], (ord(","), ord("{")))]
            key_from = int(before[-1]) + 1 if len(before) else 1
            key = bytes(buf[start + key_from : start + int(s.pos[i])]).strip(_WHITESPACE)
            is_key = key.endswith(b":") and key[:-1].strip(_WHITESPACE) == b'"traceEvents"'
            if is_key and s.byte[i] == ord("["):
                return start + int(s.pos[i])
        return None

    # -- the events ------------------------------------------------------------------------

    def _complete_events(self, buf: bytes, depth: int, eof: bool) -> tuple[list[Any], bytes, bool]:
        """The events complete in ``buf`` (which starts at array depth, outside strings),
        the bytes left after them, and whether the array's ``]`` was met."""
        if self.native is not None:
            got = self.native.read(buf)
            if got is not None:
                events, keep_from, array_end = got
                if array_end >= 0:
                    return events, buf[array_end + 1 :], True
                return events, buf[keep_from:], False
        s = _scan_brackets(buf, depth)
        closing = np.flatnonzero((s.depth == depth) & (s.byte == ord("]")))
        array_end = int(s.pos[closing[0]]) if len(closing) else -1
        if array_end >= 0:
            n = int(closing[0])
            s = _Structure(s.pos[:n], s.byte[:n], s.depth[:n])
        opens = s.pos[(s.depth == depth) & (s.byte == ord("{"))]
        closes = s.pos[(s.depth == depth + 1) & (s.byte == ord("}"))]
        complete = min(len(opens), len(closes))
        deepest = _deepest(s, opens[:complete], closes[:complete]) - depth
        events, whole = self._parse(buf, opens[:complete], closes[:complete], deepest)
        if array_end >= 0:
            keep_from = array_end
        elif len(opens) > complete:
            keep_from = int(opens[complete])
        else:
            keep_from = int(closes[complete - 1]) + 1 if complete else 0
        # Items that are not events lie between the events only when the joined parse did
        # not hold exactly the events; before and after them only if not space or commas.
        gaps = (
            (buf[: opens[0]], buf[closes[complete - 1] + 1 : keep_from])
            if complete
            else (buf[:keep_from],)
        )
        others = 0
        if not whole or any(gap.strip(_WHITESPACE + b",") for gap in gaps):
            others = _other_items(buf, keep_from, _scan(buf, depth), depth, complete)
        if others:
            self.stream.skipped["not an object"] += others
        if array_end >= 0:
            return events, buf[array_end + 1 :], True
        return events, buf[keep_from:], False

    def _parse(
        self, buf: bytes, opens: np.ndarray, closes: np.ndarray, deepest: np.ndarray
    ) -> tuple[list[Any], bool]:
        """The events parsed, and whether one parse of the text from the first to the last
        held exactly them (nothing else, none skipped)."""
        if not len(opens):
            return [], True
        too_deep = deepest > self.max_depth
        if too_deep.any():
            self.stream.skipped[f"nested deeper than {self.max_depth} levels"] += int(
                too_deep.sum()
            )
            opens, closes, deepest = opens[~too_deep], closes[~too_deep], deepest[~too_deep]
        if not len(opens):
            return [], False
        text = buf[int(opens[0]) : int(closes[-1]) + 1]
        # nesting json.loads reads without running out of stack: what TypedEvents.dicts
        # parses again must parse (a higher max_depth leaves deeper chunks to the dicts)
        if self.typed and deepest.max() <= DEFAULT_MAX_DEPTH:
            typed = decode(b"[" + text + b"]")
            if typed is not None and len(typed) == len(opens):
                first = int(opens[0])
                ends = closes - first + 1
                return TypedEvents(typed, text, opens - first, ends), not too_deep.any()
        try:
            events = loads(b"[" + text + b"]")
            if len(events) == len(opens):
                return events, not too_deep.any()
        except (ValueError, RecursionError):
            pass
        return self._parse_one_by_one(buf, opens, closes), False

    def _parse_one_by_one(self, buf: bytes, opens: np.ndarray, closes: np.ndarray) -> list[Any]:
        events = []
        for a, b in zip(opens.tolist(), closes.tolist(), strict=True):
            try:
                events.append(loads(buf[a : b + 1]))
            except UnicodeDecodeError:
                self.stream.skipped["not UTF-8 text"] += 1
            except (ValueError, RecursionError):
                self.stream.skipped["malformed JSON"] += 1
        return events

    # -- the rest of the document ------------------------------------------------------------

    def _parse_document(self) -> None:
        text = bytes(self.outside)
        for candidate in (text, text.rstrip(_WHITESPACE + b",") + b"}"):
            try:
                doc = json.loads(candidate)
            except (ValueError, RecursionError):
                continue
            if isinstance(doc, dict):
                self.stream.doc = doc
            return


_SPACE = np.zeros(256, bool)
_SPACE[list(b" \t\r\n")] = True


def _other_items(buf: bytes, end: int, s: _Structure, depth: int, events: int) -> int:
    """How many items of ``buf[:end]`` are not event objects (numbers, strings, arrays where
    events belong): the comma-separated items at the array's depth, less the events."""
    if end <= 0:
        return 0
    content = ~_SPACE[np.frombuffer(buf, np.uint8, count=end)]
    commas = s.pos[(s.depth == depth) & (s.byte == ord(",")) & (s.pos < end)]
    content[commas] = False
    starts = np.concatenate(([0], commas))
    items = int((np.add.reduceat(content, starts) > 0).sum())
    return max(items - events, 0)


def _deepest(s: _Structure, opens: np.ndarray, closes: np.ndarray) -> np.ndarray:
    """The deepest nesting reached inside each event (its own braces count as 1)."""
    if not len(opens):
        return np.zeros(0, np.int64)
    first = np.searchsorted(s.pos, opens)
    last = np.searchsorted(s.pos, closes)
    inner = np.append(s.depth + (s.byte == ord("{")) + (s.byte == ord("[")), 0)
    return np.maximum.reduceat(inner, np.ravel(np.column_stack((first, last + 1))))[::2]
