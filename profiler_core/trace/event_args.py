"""Events' args as compact text: a million small JSON strings in a dict cost ~110 bytes
each beyond their text; here they cost their characters and 24 bytes an event.

``EventArgs`` is a read-only mapping of event index -> JSON text, as ``Trace.args`` (a
plain dict elsewhere) is read: ``args.get(i)``, ``i in args``, ``args[i]``, ``items()``.
The texts stay joined in one string; each event has its (start, end) in it, found by a
binary search of the sorted event indices.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np


class EventArgs(Mapping[int, str]):
    def __init__(self, events: np.ndarray, starts: np.ndarray, ends: np.ndarray, text: str) -> None:
        order = np.argsort(events, kind="stable")
        self._events = np.asarray(events, np.int64)[order]
        self._starts = np.asarray(starts, np.int64)[order]
        self._ends = np.asarray(ends, np.int64)[order]
        self._text = text
        if len(self._events) > 1 and not (self._events[1:] > self._events[:-1]).all():
            raise ValueError("EventArgs: an event has two args texts")

    @classmethod
    def joined(cls, parts: list[tuple[np.ndarray, list[str] | np.ndarray, str]]) -> EventArgs:
        """From (events, each text's length, the texts joined) parts, in any event order."""
        events, starts, ends, texts, at = [], [], [], [], 0
        for part_events, lengths, text in parts:
            stop = at + np.cumsum(np.asarray(lengths, np.int64))
            events.append(np.asarray(part_events, np.int64))
            starts.append(np.concatenate(([at], stop[:-1])) if len(stop) else stop)
            ends.append(stop)
            texts.append(text)
            at += len(text)
        if not events:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), "")
        return cls(np.concatenate(events), np.concatenate(starts), np.concatenate(ends),
                   "".join(texts))  # fmt: skip

    def _find(self, key: object) -> int:
        if type(key) is not int and not isinstance(key, np.integer):
            return -1
        i = int(np.searchsorted(self._events, key))
        return i if i < len(self._events) and self._events[i] == key else -1

    def __getitem__(self, key: int) -> str:
        i = self._find(key)
        if i < 0:
            raise KeyError(key)
        return self._text[int(self._starts[i]) : int(self._ends[i])]

    def __contains__(self, key: object) -> bool:
        return self._find(key) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._events.tolist())

    def __len__(self) -> int:
        return len(self._events)

    def __repr__(self) -> str:
        return f"EventArgs({len(self)} events)"
