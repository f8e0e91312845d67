"""The Execution Trace's state without Qt: the run shown, the layout (Flat or Flame, BSP phase
rows, IPUs expanded to tiles), the lanes that follow from it, the spans of the visible lanes
in a cycle window (found by ``run_windows``, merged below a pixel) as the timeline draws
them, and what a drawn span is (its step, operation, hover text).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from popvision_py.viewmodels.colors import rgba
from popvision_py.viewmodels.drawn_spans import DrawnSpans, group_key, key_group
from popvision_py.viewmodels.events import Emitter
from popvision_py.viewmodels.run_windows import RunWindows
from popvision_py.viewmodels.step_colors import MERGED_COLOR, step_kind_color_table
from popvision_py.viewmodels.step_details import merged_tooltip, span_tooltip
from popvision_py.viewmodels.tile_heatmap import TileHeatMap, tile_tooltip
from popvision_py.viewmodels.timeline import NO_KEY, SpanBatch
from profiler_core.analysis.debug_groups import GROUPINGS, groups_of
from profiler_core.analysis.execution import RunTotals, run_totals
from profiler_core.analysis.trace_window import MERGED, TraceSpans
from profiler_core.model.kinds import StepKind

TILE_LANES = 4  # lane heights a tile heat-map strip takes under its IPU
MIN_LABEL_PX = 36  # spans narrower than this get no label (the timeline draws none)
MAX_LABELS = 600


class TraceLayout(enum.Enum):
    FLAT = "Flat"
    FLAME = "Flame"


class LaneRole(enum.Enum):
    PROGRAM = "program"  # the engine program of the run
    OPERATION = "operation"  # consecutive instances of one debug group (op, layer, ...)
    STEPS = "steps"  # program step instances (all kinds, or one BSP phase)
    TILES = "tiles"  # the per-tile heat map of compute steps (drawn by its own item)


_K = StepKind
PHASES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("Compute", (_K.ON_TILE_EXECUTE,)),
    ("Sync", (_K.SYNC,)),
    ("Exchange", (_K.DO_EXCHANGE, _K.GLOBAL_EXCHANGE)),
    (
        "Host+ctrl",
        (
            _K.STREAM_COPY_BEGIN, _K.STREAM_COPY_MID, _K.STREAM_COPY_END, _K.REPEAT,
            _K.REPEAT_WHILE, _K.IF, _K.CALL, _K.PRINT_TENSOR, _K.WRITE_UNDEF,
        ),
    ),
)  # fmt: skip
"""BSP phase rows: a name and the step kinds drawn in it."""


@dataclass(frozen=True)
class Lane:
    ipu: int
    role: LaneRole
    name: str
    kinds: tuple[int, ...] | None = None  # STEPS lanes of one phase


class ExecutionTraceModel:
    """One report's execution trace. ``changed`` emits "run", "lanes" or "spans"."""

    def __init__(self, report: Any, debug: Any = None) -> None:
        self.report = report
        self.debug = debug
        self.runs: RunTotals = run_totals(report)
        self.num_ipus = int(report.target.num_ipus)
        self.tiles_per_ipu = int(report.target.tiles_per_ipu)
        self.clock_hz = float(report.target.clock_hz)
        self.run = 0
        self.layout = TraceLayout.FLAT
        self.bsp = False
        self.expanded: set[int] = set()
        self.group_by = "name"  # the op call's name (m4, linear0/add): what a user calls an op
        self.lane_window: tuple[int, int] | None = None  # lanes on screen, None for all
        self.changed = Emitter()
        self._kind_colors = step_kind_color_table()
        self._merged_color = np.array(rgba(MERGED_COLOR), np.uint8)
        self._step_group = np.zeros(0, np.int64)
        self._group_labels: list[str] = []
        self._set_groups()
        self.lanes: list[Lane] = []
        self._build_lanes()
        self.last = DrawnSpans.empty()
        self._heat: TileHeatMap | None = None
        self._phases_now: dict[int, list[TraceSpans]] = {}
        self.windows = RunWindows(report, self.run) if len(self.runs) else None

    @property
    def heat(self) -> TileHeatMap:
        """The tile heat maps, made when an IPU is first expanded (they copy the per-tile
        compute cycles, sorted by compute set)."""
        if self._heat is None:
            self._heat = TileHeatMap(self.report)
        return self._heat

    def heat_image(self, ipu: int, x0: float, x1: float, width: int, rows: int) -> np.ndarray:
        """(rows, width) tile heat values of IPU ``ipu``'s strip (see ``TileHeatMap``), from
        the compute steps found as the trace's own rows are (whole-run spans when wide)."""
        t0, t1 = int(np.floor(max(x0, 0))), int(np.ceil(min(x1, self.total_cycles)))
        if t1 <= t0 or width < 1 or rows < 1:
            return np.full((rows, width), np.nan, np.float32)
        spans = self.windows.compute(ipu, t0, t1, width)
        return self.heat.image_of(spans, ipu, x0, x1, width, rows)[0]

    # -- what is shown --------------------------------------------------------------------
    @property
    def total_cycles(self) -> int:
        return int(self.runs.cycles[self.run]) if len(self.runs) else 0

    def run_labels(self) -> list[str]:
        return [
            f"Run {i}: {name} ({int(c):,} cycles)"
            for i, (name, c) in enumerate(zip(self.runs.names, self.runs.cycles, strict=True))
        ]

    def set_run(self, run: int) -> None:
        if not 0 <= run < len(self.runs):
            raise IndexError(f"there is no run {run}; the report has {len(self.runs)} run(s)")
        if run != self.run:
            self.run = run
            self.windows = RunWindows(self.report, run)
            self.changed.emit("run")

    def set_layout(self, layout: TraceLayout) -> None:
        if layout != self.layout:
            self.layout = layout
            self._build_lanes()

    def set_bsp(self, on: bool) -> None:
        if on != self.bsp:
            self.bsp = on
            self._build_lanes()

    def set_expanded(self, ipu: int, on: bool) -> None:
        if on != (ipu in self.expanded):
            (self.expanded.add if on else self.expanded.discard)(ipu)
            self._build_lanes()

    def configure(self, layout: TraceLayout, bsp: bool, group_by: str) -> None:
        """Set the layout, phase rows and grouping at once (the controls' state)."""
        self.layout, self.bsp = layout, bsp
        self.set_group_by(group_by)
        self._build_lanes()

    def set_group_by(self, group_by: str) -> None:
        if group_by not in GROUPINGS:
            raise ValueError(f"group_by must be one of {', '.join(GROUPINGS)}")
        if group_by != self.group_by:
            self.group_by = group_by
            self._set_groups()
            if self.windows is not None:
                self.windows.forget("operation")
            self.changed.emit("spans")

    def _set_groups(self) -> None:
        self._group_labels, self._step_group = groups_of(
            self.debug, self.group_by, self.report.programs.step_debug
        )

    def operation_of(self, step: int) -> str:
        """The debug group (op, layer, ...) of ``step``; "" when it has none."""
        return self._group_labels[int(self._step_group[step])]

    def operation_steps(self, label: str) -> np.ndarray:
        """The program steps in the debug group ``label``."""
        if label not in self._group_labels:
            return np.zeros(0, np.int64)
        return np.flatnonzero(self._step_group == self._group_labels.index(label))

    def _build_lanes(self) -> None:
        lanes: list[Lane] = []
        for ipu in range(self.num_ipus):
            prefix = f"IPU {ipu}"
            if self.layout == TraceLayout.FLAME:
                lanes.append(Lane(ipu, LaneRole.PROGRAM, f"{prefix} program"))
                lanes.append(Lane(ipu, LaneRole.OPERATION, f"{prefix} operation"))
            if self.bsp:
                for phase, kinds in PHASES:
                    lanes.append(Lane(ipu, LaneRole.STEPS, f"{prefix} {phase}", kinds))
            else:
                name = f"{prefix} steps" if self.layout == TraceLayout.FLAME else prefix
                lanes.append(Lane(ipu, LaneRole.STEPS, name))
            if ipu in self.expanded:
                lanes.append(Lane(ipu, LaneRole.TILES, f"{prefix} tiles"))
                lanes += [Lane(ipu, LaneRole.TILES, "")] * (TILE_LANES - 1)
        self.lanes = lanes
        self.changed.emit("lanes")

    def lane_names(self) -> list[str]:
        return [lane.name for lane in self.lanes]

    def tile_strips(self) -> list[tuple[int, int]]:
        """(IPU, first lane) of each tile heat-map strip."""
        return [
            (lane.ipu, i)
            for i, lane in enumerate(self.lanes)
            if lane.role == LaneRole.TILES and lane.name
        ]

    def first_lane_of_ipu(self, ipu: int) -> int:
        return next(i for i, lane in enumerate(self.lanes) if lane.ipu == ipu)

    # -- spans ----------------------------------------------------------------------------
    def spans(self, x0: float, x1: float, width: int) -> SpanBatch:
        """Every visible lane's spans in cycles [x0, x1) of the run, for ``width`` pixels."""
        t0, t1 = int(np.floor(max(x0, 0))), int(np.ceil(min(x1, self.total_cycles)))
        if not len(self.runs) or t1 <= t0 or width < 1:
            self.last = DrawnSpans.empty()
            return self.last.batch
        first, stop = self.lane_window or (0, len(self.lanes))
        parts = []
        self._phases_now: dict[int, list[TraceSpans]] = {}  # an IPU's phase rows, this paint
        for index in range(max(first, 0), min(stop, len(self.lanes))):
            lane = self.lanes[index]
            if lane.role == LaneRole.STEPS:
                parts.append(self._step_spans(index, lane, t0, t1, width))
            elif lane.role == LaneRole.OPERATION:
                parts.append(self._operation_spans(index, lane, t0, t1, width))
            elif lane.role == LaneRole.PROGRAM:
                parts.append(self._program_span(index, t0, t1))
        drawn = DrawnSpans.join(parts)
        self.last = drawn
        # Names only for spans wide enough to show one: a paint costs pixels, not spans.
        wide = (drawn.batch.end - drawn.batch.start) * width >= MIN_LABEL_PX * (t1 - t0)
        labels = [""] * len(drawn.batch)
        for i in np.flatnonzero(wide)[:MAX_LABELS].tolist():
            labels[i] = self.label_of(i)
        self.last = DrawnSpans(replace(drawn.batch, labels=labels), drawn.kind, drawn.count)
        return self.last.batch

    def _found_steps(self, lane: Lane, t0: int, t1: int, width: int) -> TraceSpans:
        """A steps lane's spans: its IPU's phase rows are found together, once a paint."""
        if lane.kinds is None:
            return self.windows.steps(lane.ipu, t0, t1, width)
        phases = [kinds for _, kinds in PHASES]
        if lane.ipu not in self._phases_now:
            self._phases_now[lane.ipu] = self.windows.phases(lane.ipu, phases, t0, t1, width)
        return self._phases_now[lane.ipu][phases.index(lane.kinds)]

    def _step_spans(self, index: int, lane: Lane, t0: int, t1: int, width: int) -> DrawnSpans:
        found = self._found_steps(lane, t0, t1, width)
        merged_kind = found.kind == MERGED
        color = self._kind_colors[np.where(merged_kind, 0, found.kind)]
        color[merged_kind] = self._merged_color
        keys = np.where(found.step == MERGED, NO_KEY, found.step).astype(np.int64)
        return DrawnSpans.part(index, found.start, found.end, color, keys, found.kind, found.count)

    def _operation_spans(self, index: int, lane: Lane, t0: int, t1: int, width: int) -> DrawnSpans:
        found = self.windows.operations(lane.ipu, self._step_group, t0, t1, width)
        color = np.tile(np.array(rgba("#7d8fb3"), np.uint8), (len(found), 1))
        color[found.group % 2 == 1] = rgba("#a3b1cc")  # neighbours read apart
        color[found.group == MERGED] = self._merged_color
        keys = np.where(found.group == MERGED, NO_KEY, group_key(found.group))
        kinds = np.full(len(found), MERGED, np.int16)
        return DrawnSpans.part(index, found.start, found.end, color, keys, kinds, found.count)

    def _program_span(self, index: int, t0: int, t1: int) -> DrawnSpans:
        one = np.array([1], np.int64)
        return DrawnSpans.part(
            index,
            np.array([0]),
            np.array([self.total_cycles]),
            np.array([rgba("#5b6b8c")], np.uint8),
            np.array([NO_KEY], np.int64),
            np.array([MERGED], np.int16),
            one,
        )

    def label_of(self, index: int) -> str:
        """What a drawn span is called: a step's name, an operation, the run."""
        d = self.last
        lane = self.lanes[int(d.batch.lane[index])]
        key = int(d.batch.key[index])
        if lane.role == LaneRole.PROGRAM:
            return self.runs.names[self.run]
        if lane.role == LaneRole.OPERATION:
            if key == NO_KEY:
                return ""
            return self._group_labels[key_group(key)] or "(no operation)"
        return self.report.strings[int(self.report.programs.step_name[key])] if key >= 0 else ""

    def span_step(self, index: int) -> int:
        """The program step of a drawn span, -1 for merged, operation and program spans."""
        if not 0 <= index < len(self.last.batch):
            return -1
        key = int(self.last.batch.key[index])
        return key if key >= 0 else -1

    def span_operation(self, index: int) -> str | None:
        """The operation label of a drawn operation span, None for any other span."""
        if not 0 <= index < len(self.last.batch):
            return None
        key = int(self.last.batch.key[index])
        lane = self.lanes[int(self.last.batch.lane[index])]
        if lane.role != LaneRole.OPERATION or key == NO_KEY:
            return None
        return self._group_labels[key_group(key)]

    def first_instance(self, step: int) -> tuple[int, int] | None:
        """[start, end) cycles of the first instance of ``step`` in the run, None if none."""
        run = self.report.execution.runs[self.run]
        hits = np.flatnonzero(run.step_ids == step)
        if hits.size == 0:
            return None
        start = int(run.start_cycles[hits[0]])
        return start, start + int(self.report.programs.step_cycles[step].max(initial=1))

    def instance_in(self, steps: object, x0: float, x1: float) -> bool:
        """Whether an instance of any of ``steps`` overlaps cycles [x0, x1) of the run."""
        run = self.report.execution.runs[self.run]
        lo = max(int(np.searchsorted(run.start_cycles, x0, side="right")) - 1, 0)
        hi = int(np.searchsorted(run.start_cycles, x1, side="left"))
        wanted = np.asarray(steps, dtype=np.int64).reshape(-1)
        return bool(np.isin(run.step_ids[lo:hi], wanted).any())

    def tile_tooltip(self, ipu: int, x: float, fraction: float) -> str:
        """Hover text of a tile strip at cycle ``x``, ``fraction`` of the way down its tiles."""
        return tile_tooltip(self.report, self.run, ipu, x, fraction)

    def operation_key(self, label: str) -> int:
        """The key the operation spans of ``label`` carry (to outline them)."""
        if label not in self._group_labels:
            return NO_KEY
        return int(group_key(self._group_labels.index(label)))

    def tooltip(self, index: int) -> str:
        """Hover text of drawn span ``index``."""
        if not 0 <= index < len(self.last.batch):
            return ""
        batch = self.last.batch
        lane = self.lanes[int(batch.lane[index])]
        start, end = float(batch.start[index]), float(batch.end[index])
        count = int(self.last.count[index])
        if lane.role == LaneRole.PROGRAM:
            return (
                f"Run {self.run}: {self.runs.names[self.run]}\n"
                f"{self.total_cycles:,} cycles ({self.total_cycles / self.clock_hz * 1e6:,.2f} µs)"
            )
        if lane.role == LaneRole.OPERATION:
            if int(batch.key[index]) == NO_KEY:
                return merged_tooltip(-1, count, start, end)
            return (
                f"Operation ({self.group_by}): {self.label_of(index)}\n"
                f"{count:,} step instances in cycles {start:,.0f}-{end:,.0f} on IPU {lane.ipu}\n"
                "Click to select the operation's steps."
            )
        step = self.span_step(index)
        if step < 0:
            return merged_tooltip(int(self.last.kind[index]), count, start, end)
        operation = self.operation_of(step)
        context = int(self.report.programs.step_debug[step])
        if self.debug is not None and 0 <= context < len(self.debug) and self.group_by != "op":
            op = self.debug.op[context]
            operation = f"{operation} ({op})" if op and operation else operation or op
        return span_tooltip(self.report, step, lane.ipu, operation)
