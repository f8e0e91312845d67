"""What ``lane_window`` asks of a flame lane, whatever keeps its spans: a copied ``Lane``,
an ``IndexedLane`` into the Trace's columns, or a ``ChainedLane`` over a live trace's
pieces. Positions are the lane's spans in start order."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class WindowLane(Protocol):
    """A lane's spans by position: counts before times, and each position's columns."""

    def __len__(self) -> int: ...

    def started_before(self, keys: np.ndarray) -> np.ndarray:
        """How many spans start before each of ``keys`` (int64 ns)."""
        ...

    def ended_by(self, keys: np.ndarray) -> np.ndarray:
        """How many spans end at or before each of ``keys``."""
        ...

    def start_at(self, pos: np.ndarray) -> np.ndarray: ...

    def end_at(self, pos: np.ndarray) -> np.ndarray: ...

    def reach_at(self, pos: np.ndarray) -> np.ndarray:
        """The span reaching furthest among positions 0..pos."""
        ...

    def event_at(self, pos: np.ndarray) -> np.ndarray:
        """The Trace event (or chain position) drawn at each position."""
        ...
