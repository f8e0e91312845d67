"""The one selection of an opened report, which every view reads and writes.

Select a step in Liveness and the Program Tree follows; pick an operation and its steps are
highlighted on the liveness chart and the execution trace; select tiles in Memory and the
liveness curve becomes theirs. Views never talk to each other: they write here and follow
``changed``, which names what changed ("tiles", "steps", "operation", "run", "range").
"""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.events import Emitter
from profiler_core.model.unique import sorted_unique

WHATS = ("tiles", "steps", "operation", "run", "range")


def _as_ids(values: object) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


class ReportSelection:
    """Tiles, program steps, an operation, a run and a cycle range of one report.

    ``steps`` keeps the order they were picked in (the first is the "current" step that
    details panels show); ``tiles`` is sorted and unique. An empty array means "none".
    """

    def __init__(self) -> None:
        self.tiles = np.zeros(0, dtype=np.int64)
        self.steps = np.zeros(0, dtype=np.int64)
        self.operation = ""  # label of the selected operation, "" for none
        self.operation_group_by = "op"
        self.operation_steps = np.zeros(0, dtype=np.int64)
        self.run = 0
        self.cycle_range: tuple[int, int] | None = None  # [start, end) cycles of the run
        self.changed = Emitter()

    # -- tiles ---------------------------------------------------------------------------
    def select_tiles(self, tiles: object) -> None:
        tiles = sorted_unique(_as_ids(tiles))
        if not np.array_equal(tiles, self.tiles):
            self.tiles = tiles
            self.changed.emit("tiles")

    # -- program steps -------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The current step (the first picked), -1 for none."""
        return int(self.steps[0]) if self.steps.size else -1

    def select_steps(self, steps: object) -> None:
        steps = _as_ids(steps)
        _, first = np.unique(steps, return_index=True)
        steps = steps[np.sort(first)]  # unique, in the order picked
        if not np.array_equal(steps, self.steps):
            self.steps = steps
            self.changed.emit("steps")

    def select_step(self, step: int, add: bool = False) -> None:
        """Select ``step``; with ``add`` (shift-click) toggle it in the selected steps."""
        if not add:
            self.select_steps([step])
        elif step in self.steps:
            self.select_steps(self.steps[self.steps != step])
        else:
            self.select_steps(np.append(self.steps, step))

    # -- operation -----------------------------------------------------------------------
    def select_operation(self, label: str, steps: object, group_by: str = "op") -> None:
        """Select the operation ``label`` (grouped ``group_by``) whose program steps are
        ``steps``; "" clears it."""
        steps = sorted_unique(_as_ids(steps)) if label else np.zeros(0, dtype=np.int64)
        same = label == self.operation and group_by == self.operation_group_by
        if same and np.array_equal(steps, self.operation_steps):
            return
        self.operation, self.operation_group_by, self.operation_steps = label, group_by, steps
        self.changed.emit("operation")

    # -- run and range -------------------------------------------------------------------
    def select_run(self, run: int) -> None:
        if run != self.run:
            self.run = int(run)
            self.cycle_range = None
            self.changed.emit("run")

    def select_range(self, cycle_range: tuple[int, int] | None) -> None:
        if cycle_range is not None:
            cycle_range = (int(min(cycle_range)), int(max(cycle_range)))
        if cycle_range != self.cycle_range:
            self.cycle_range = cycle_range
            self.changed.emit("range")

    def clear(self) -> None:
        self.select_tiles([])
        self.select_steps([])
        self.select_operation("", [])
        self.select_range(None)

    # -- what the status bar says --------------------------------------------------------
    def describe(self) -> str:
        """One short line: run, tiles, steps, operation, range (only what is selected)."""
        parts = [f"run {self.run}"]
        if self.tiles.size:
            parts.append(_count(self.tiles.size, "tile"))
        if self.steps.size == 1:
            parts.append(f"step {self.step}")
        elif self.steps.size:
            shown = ", ".join(str(s) for s in self.steps[:4].tolist())
            parts.append(f"steps {shown}{', …' if self.steps.size > 4 else ''}")
        if self.operation:
            parts.append(f"operation {self.operation}")
        if self.cycle_range is not None:
            start, end = self.cycle_range
            parts.append(f"cycles {start:,}-{end:,}")
        return " · ".join(parts)


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
