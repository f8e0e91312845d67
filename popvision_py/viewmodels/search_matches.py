"""Next / Previous over the matches of a search, wrapping round, and the "3 of 12" a search
box shows beside it: one cursor for every view with a search (Program Tree, System Trace)."""

from __future__ import annotations

import numpy as np


class SearchMatches:
    """The matches of one search text (ids in the order the user steps through them)."""

    def __init__(self) -> None:
        self.text = ""
        self.ids = np.zeros(0, dtype=np.int64)
        self.position = -1  # of the match shown; -1 before the first step

    @property
    def found(self) -> bool:
        """Has a search been made since the last reset (its matches may be none)."""
        return bool(self.text.strip())

    def reset(self) -> None:
        self.text, self.ids, self.position = "", np.zeros(0, dtype=np.int64), -1

    def set(self, text: str, ids: np.ndarray) -> int:
        """The matches of ``text``; the next step shows the first (or, backwards, the last)."""
        self.text = text
        self.ids = np.asarray(ids, dtype=np.int64)
        self.position = -1
        return int(self.ids.size)

    def step(self, backwards: bool = False) -> int:
        """The next (or previous) match, wrapping round; -1 when there is none."""
        if not self.ids.size:
            return -1
        if self.position < 0:
            self.position = self.ids.size - 1 if backwards else 0
        else:
            self.position = (self.position + (-1 if backwards else 1)) % self.ids.size
        return int(self.ids[self.position])

    def describe(self) -> str:
        """``3 of 12``, ``no match``, or "" when there is no search text."""
        if not self.text.strip():
            return ""
        if not self.ids.size:
            return "no match"
        shown = self.position + 1 if self.position >= 0 else 0
        return f"{shown:,} of {self.ids.size:,}"
