"""The Liveness report's state, without Qt: the scope of the curve (all IPUs, one IPU, the
selected tiles), always-live bytes on or off, the curve and its peak, and what a hover says.

Tiles and program steps live in the report's shared ``ReportSelection``: this model writes
the tiles typed in its box and the steps clicked there, and re-emits the selection's changes
that touch the chart ("curve", "steps", "operation").
"""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.events import Emitter
from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.selection import ReportSelection
from profiler_core.analysis.liveness import LivenessTable, liveness_table
from profiler_core.analysis.liveness_tiles import ipu_tiles, liveness_on_tiles
from profiler_core.analysis.tiles import SelectionError, parse_tile_selection
from profiler_core.model.kinds import StepKind

ALL_IPUS = "All IPUs"
SELECTED_TILES = "Selected tiles"


class LivenessViewModel:
    """What the liveness chart shows. ``changed`` emits "curve" (scope, tiles or always-live
    changed), "steps" (selected steps), "operation" (the operation's steps) or "error"."""

    def __init__(
        self,
        report: object,
        selection: ReportSelection,
        name: str = "",
        whole: LivenessTable | None = None,
    ) -> None:
        self.report = report
        self.name = name  # the report's side and name when comparing ("A: tutorial4"), else ""
        self.selection = selection
        # ``whole``: the report's liveness_table when already computed (in a worker)
        self.whole = whole if whole is not None else liveness_table(report)
        target = report.target
        self.num_ipus = int(target.num_ipus)
        self.num_tiles = int(target.num_tiles)
        self.scopes = [ALL_IPUS] + [f"IPU {i}" for i in range(self.num_ipus)] + [SELECTED_TILES]
        # tiles picked before the page was built (in Memory, the Tile Map) are the scope
        self.scope = SELECTED_TILES if selection.tiles.size else ALL_IPUS
        self.include_always_live = True
        self.selection_error = ""
        self.changed = Emitter()
        self._tables: dict[object, LivenessTable] = {}
        self._curve: np.ndarray | None = None
        self._strings = report.strings
        self.scale_group: list[LivenessViewModel] = [self]  # the sides of a comparison
        selection.changed.connect(self._on_selection_changed)

    def share_y_axis(self, models: list[LivenessViewModel]) -> None:
        """Give ``models`` (the sides of a comparison) one y axis, so equal heights mean equal
        bytes."""
        for model in models:
            model.scale_group = list(models)

    def close(self) -> None:
        """Stop following the selection (the view is showing another report)."""
        self.selection.changed.disconnect(self._on_selection_changed)

    @property
    def num_steps(self) -> int:
        return self.whole.num_steps

    # -- options ----------------------------------------------------------------------------
    def set_scope(self, scope: str) -> None:
        """Show ``scope``. All IPUs or one IPU drops the report's tile selection: the page
        never says "All IPUs" while tiles are selected (and every view follows)."""
        if scope not in self.scopes:
            raise ValueError(f"{scope!r} is not one of {self.scopes}")
        if scope != self.scope:
            self.scope = scope
            self._curve = None
            self.changed.emit("curve")
        if scope != SELECTED_TILES and self.selection.tiles.size:
            self.selection.select_tiles([])

    def set_include_always_live(self, on: bool) -> None:
        if on != self.include_always_live:
            self.include_always_live = on
            self._curve = None
            self.changed.emit("curve")

    # -- the curve -----------------------------------------------------------------------------
    def scope_table(self) -> LivenessTable | None:
        """Live bytes of the scope; None for "Selected tiles" with no tile selected."""
        if self.scope == ALL_IPUS:
            return self.whole
        if self.scope == SELECTED_TILES:
            tiles = self.selection.tiles
            if tiles.size == 0:
                return None
            key: object = ("tiles", tiles.tobytes())
        else:
            key = int(self.scope.split()[1])
            tiles = ipu_tiles(self.report, key)
        if key not in self._tables:
            if len(self._tables) > 8:  # keep a few scopes, not every selection ever made
                self._tables.clear()
            self._tables[key] = liveness_on_tiles(self.report, tiles)
        return self._tables[key]

    def curve(self) -> np.ndarray:
        """int64 bytes per program step as drawn (zeros when the scope has no tiles)."""
        if self._curve is None:
            table = self.scope_table()
            if table is None:
                self._curve = np.zeros(self.num_steps, dtype=np.int64)
            else:
                self._curve = table.live_bytes(self.include_always_live)
        return self._curve

    def y_max(self) -> float:
        """The top of the y axis: the scope's peak with headroom, the highest of the sides
        when comparing."""
        top = max(int(m.curve().max(initial=0)) for m in self.scale_group)
        return float(max(top, 1024) * 1.08)

    def peak(self) -> tuple[int, int]:
        """(step, bytes) of the first step with the most live bytes of the scope; (-1, 0)."""
        table = self.scope_table()
        if table is None or table.num_steps == 0:
            return -1, 0
        step = table.peak_step
        return step, int(self.curve()[step])

    def peak_text(self) -> str:
        step, size = self.peak()
        if self.scope == SELECTED_TILES and self.selection.tiles.size == 0:
            return "No tile selected: type tiles in Select tile, or select them in Memory."
        if step < 0:
            return "No program steps."
        return f"Peak: {format_bytes(size, exact=True)} at step {step:,} {self.step_name(step)}"

    def title_text(self) -> str:
        which = self.scope
        if self.scope == SELECTED_TILES and self.selection.tiles.size:
            which = f"{self.selection.tiles.size:,} selected tile(s)"
        always = "including" if self.include_always_live else "excluding"
        prefix = f"{self.name} — " if self.name else ""
        return (
            f"{prefix}Live memory of {which} over {self.num_steps:,} program steps, {always} "
            f"{format_bytes(self._always_live_of_scope(), exact=True)} always-live"
        )

    def _always_live_of_scope(self) -> int:
        table = self.scope_table()
        return table.always_live_bytes if table is not None else 0

    # -- steps ---------------------------------------------------------------------------------
    def step_name(self, step: int) -> str:
        index = int(self.whole.step_name[step])
        return self._strings[index] if index >= 0 else ""

    def step_kind_name(self, step: int) -> str:
        return StepKind(int(self.whole.step_kind[step])).poplar_name

    def hover_text(self, step: int) -> str:
        """The callout for ``step``: index, name, kind and live bytes."""
        if not 0 <= step < self.num_steps:
            return ""
        lines = [
            f"Step {step:,}: {self.step_name(step)}",
            f"Kind: {self.step_kind_name(step)}",
            f"Live: {format_bytes(int(self.curve()[step]), exact=True)}",
        ]
        if step in self.selection.operation_steps:
            lines.append(f"In operation {self.selection.operation}")
        return "\n".join(lines)

    def click_step(self, step: int, add: bool = False) -> None:
        """A click on the chart (``add``: shift-click toggles the step in the selection)."""
        if 0 <= step < self.num_steps:
            self.selection.select_step(step, add=add)

    def step_mask(self, steps: np.ndarray) -> np.ndarray:
        """bool per program step: True for ``steps`` (ids outside the program are ignored)."""
        mask = np.zeros(self.num_steps, dtype=bool)
        steps = np.asarray(steps, dtype=np.int64)
        mask[steps[(steps >= 0) & (steps < self.num_steps)]] = True
        return mask

    # -- tiles ---------------------------------------------------------------------------------
    def select_text(self, text: str) -> bool:
        """The tiles typed (``0,5,100-120``) become the report's selected tiles; False, with
        ``selection_error`` set, when the text is not a tile selection."""
        try:
            tiles = parse_tile_selection(text, self.num_tiles)
        except SelectionError as error:
            self.selection_error = error.problem
            self.changed.emit("error")
            return False
        self.selection_error = ""
        self.changed.emit("error")
        self.selection.select_tiles(tiles)
        return True

    def _on_selection_changed(self, what: str) -> None:
        if what == "tiles":
            # tiles picked anywhere (Memory, the Tile Map) are the scope; none picked, all
            if self.selection.tiles.size:
                self.scope = SELECTED_TILES
            elif self.scope == SELECTED_TILES:
                self.scope = ALL_IPUS
            if self.scope == SELECTED_TILES or not self.selection.tiles.size:
                self._curve = None
            self.changed.emit("curve")  # the title names the tiles in any scope
        elif what in ("steps", "operation"):
            self.changed.emit(what)
