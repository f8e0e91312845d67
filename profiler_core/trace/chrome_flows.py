"""Flow arrows of a Chrome trace: which span each flow event binds to, and the arrows.

Two forms exist. Flow events ``s`` (start), ``t`` (step) and ``f`` (finish) sharing an id
bind to the span enclosing them on their thread (``f`` binds to the next span to begin
unless ``"bp": "e"`` asks for the enclosing one); consecutive points of one id are arrows.
Newer traces mark the spans themselves: ``bind_id`` with ``flow_out`` / ``flow_in``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class FlowPoints:
    """Flow endpoints met while reading, resolved to spans once every span is known."""

    #: (flow key, phase s/t/f, thread, ts_ns, binds to the enclosing span) in file order
    points: list[tuple[Any, str, int, int, bool]] = field(default_factory=list)
    #: (bind id, row, is an outgoing end) of spans carrying bind_id
    bound: list[tuple[Any, int, bool]] = field(default_factory=list)

    def arrows(
        self, thread: np.ndarray, start: np.ndarray, end: np.ndarray, kind: np.ndarray,
        span_kinds: tuple[int, ...], skipped: Counter,
    ) -> np.ndarray:  # fmt: skip
        """(F, 2) rows of the spans each arrow joins, in the columns' (unsorted) order."""
        pairs: list[tuple[int, int]] = []
        if self.points:
            pairs += self._point_arrows(thread, start, end, np.isin(kind, span_kinds), skipped)
        if self.bound:
            pairs += _bound_arrows(self.bound, start)
        return np.array(pairs, np.int64).reshape(-1, 2)

    def _point_arrows(
        self, thread: np.ndarray, start: np.ndarray, end: np.ndarray, spans: np.ndarray,
        skipped: Counter,
    ) -> list[tuple[int, int]]:  # fmt: skip
        rows = np.flatnonzero(spans)
        order = rows[np.lexsort((start[rows], thread[rows]))]
        by_thread = {int(t): order[thread[order] == t] for t in np.unique(thread[order]).tolist()}
        pairs, last = [], {}
        for key, ph, t, ts, enclosing in self.points:
            row = _bind(by_thread.get(t), start, end, ts, enclosing or ph != "f")
            if row < 0:
                skipped["flow events with no span to bind to"] += 1
                if ph == "f":
                    last.pop(key, None)
                continue
            if ph == "s":
                last[key] = row
            elif key in last:
                if last[key] != row:
                    pairs.append((last[key], row))
                if ph == "f":
                    del last[key]
                else:
                    last[key] = row
            else:
                skipped["flow steps or ends with no start"] += 1
        return pairs


def _bind(
    rows: np.ndarray | None, start: np.ndarray, end: np.ndarray, ts: int, enclosing: bool
) -> int:
    """The innermost span of ``rows`` (sorted by start) enclosing ``ts``, or with
    ``enclosing`` False the first span starting at or after ``ts``; -1 when none."""
    if rows is None or not len(rows):
        return -1
    starts = start[rows]
    if not enclosing:
        i = int(np.searchsorted(starts, ts, side="left"))
        return int(rows[i]) if i < len(rows) else -1
    upto = int(np.searchsorted(starts, ts, side="right"))
    inside = rows[:upto][end[rows[:upto]] >= ts]
    return int(inside[-1]) if len(inside) else -1  # the latest start is the innermost


def _bound_arrows(bound: list[tuple[Any, int, bool]], start: np.ndarray) -> list[tuple[int, int]]:
    pairs, last = [], {}
    for bind_id, row, outgoing in sorted(bound, key=lambda b: (int(start[b[1]]), not b[2])):
        if not outgoing and bind_id in last and last[bind_id] != row:
            pairs.append((last[bind_id], row))
        if outgoing:
            last[bind_id] = row
    return pairs
