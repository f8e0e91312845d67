"""Events' args as compact text: a million small JSON strings in a dict cost ~110 bytes
each beyond their text; here they cost their characters and 24 bytes an event.

``EventArgs`` is a read-only mapping of event index -> JSON text, as ``Trace.args`` (a
plain dict elsewhere) is read: ``args.get(i)``, ``i in args``, ``args[i]``, ``items()``.
The texts stay joined in one string; each event has its (start, end) in it, found by a
binary search of the sorted event indices. Args kept as the file wrote them (raw JSON
bytes, from msgspec's decode) are a second joined store: an event's compact text is made
when it is asked for, as ``json.dumps(json.loads(raw), separators=(",", ":"))`` -- the
text the per-event path makes of the same object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

#: (events, each text's length, the texts joined) -- a chunk of args as read
Part = tuple[np.ndarray, Any, Any]


class _Joined:
    """Texts joined in one str or bytes, by sorted event index."""

    def __init__(self, events: np.ndarray, starts: np.ndarray, ends: np.ndarray, text: Any) -> None:
        order = np.argsort(events, kind="stable")
        self.events = np.asarray(events, np.int64)[order]
        self.starts = np.asarray(starts, np.int64)[order]
        self.ends = np.asarray(ends, np.int64)[order]
        self.text = text

    @classmethod
    def of(cls, parts: list[Part], empty: Any) -> _Joined:
        events, starts, ends, texts, at = [], [], [], [], 0
        for part_events, lengths, text in parts:
            stop = at + np.cumsum(np.asarray(lengths, np.int64))
            events.append(np.asarray(part_events, np.int64))
            starts.append(np.concatenate(([at], stop[:-1])) if len(stop) else stop)
            ends.append(stop)
            texts.append(text)
            at += len(text)
        if not events:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), empty)
        return cls(np.concatenate(events), np.concatenate(starts), np.concatenate(ends),
                   empty.join(texts))  # fmt: skip

    def find(self, key: object) -> int:
        if type(key) is not int and not isinstance(key, np.integer):
            return -1
        i = int(np.searchsorted(self.events, key))
        return i if i < len(self.events) and self.events[i] == key else -1

    def at(self, i: int) -> Any:
        return self.text[int(self.starts[i]) : int(self.ends[i])]


class EventArgs(Mapping[int, str]):
    def __init__(self, events: np.ndarray, starts: np.ndarray, ends: np.ndarray, text: str,
                 raw: _Joined | None = None) -> None:  # fmt: skip
        self._texts = _Joined(events, starts, ends, text)
        self._raw = raw if raw is not None else _Joined.of([], b"")
        every = np.concatenate((self._texts.events, self._raw.events))
        if len(self._raw.events):
            every.sort()
        if len(every) > 1 and not (every[1:] > every[:-1]).all():
            raise ValueError("EventArgs: an event has two args texts")
        self._events = every

    @classmethod
    def joined(cls, parts: list[Part], raw: list[Part] = ()) -> EventArgs:
        """From (events, each text's length, the texts joined) parts, in any event order;
        ``raw`` parts hold the JSON bytes of args objects as written."""
        texts = _Joined.of(parts, "")
        return cls(texts.events, texts.starts, texts.ends, texts.text, _Joined.of(list(raw), b""))

    def __getitem__(self, key: int) -> str:
        i = self._texts.find(key)
        if i >= 0:
            return self._texts.at(i)
        i = self._raw.find(key)
        if i < 0:
            raise KeyError(key)
        return json.dumps(json.loads(self._raw.at(i)), separators=(",", ":"))

    def __contains__(self, key: object) -> bool:
        return self._texts.find(key) >= 0 or self._raw.find(key) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._events.tolist())

    def __len__(self) -> int:
        return len(self._events)

    def __repr__(self) -> str:
        return f"EventArgs({len(self)} events)"
