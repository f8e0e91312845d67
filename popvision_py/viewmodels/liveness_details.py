"""The Liveness report's details as tables, without Qt: always-live variables, the variables
live at the selected program steps, the vertices of their compute sets, and their cycles.

With several steps selected, the per-step tables get one column per step and a Difference
column (the last selected step minus the first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.checks import checked_programs, debug_of
from profiler_core.analysis.debug_groups import lazy_debug_column
from profiler_core.analysis.execution import tile_balance
from profiler_core.analysis.liveness import variables_live_at
from profiler_core.analysis.liveness_tiles import VariableTiles, variable_tiles
from profiler_core.analysis.vertices import compute_set_vertices
from profiler_core.model.kinds import StepKind
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.unique import sorted_unique

TILE_LIST_CHARS = 80
DIFFERENCE_HELP = "The last selected step minus the first selected step."


class TileLists(Sequence[str]):
    """Each variable's tiles as text, formatted when a row is shown (not for every row)."""

    def __init__(self, tiles: VariableTiles) -> None:
        self.tiles = tiles
        self._cache: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self.tiles)

    def __getitem__(self, row: int) -> str:  # type: ignore[override]
        if row not in self._cache:
            text = self.tiles.text(int(row))
            if len(text) > TILE_LIST_CHARS:
                text = text[: TILE_LIST_CHARS - 1].rsplit(",", 1)[0] + ",…"
            self._cache[row] = text
        return self._cache[row]


def text_matcher(*columns: Sequence[str]) -> Callable[[str], np.ndarray]:
    """Rows where any of ``columns`` contains the text (case-insensitive), one vectorised
    search per keystroke."""
    joined: list[np.ndarray] = []

    def match(text: str) -> np.ndarray:
        if not joined:
            parts = zip(*columns, strict=True)
            joined.append(np.array(["\0".join(p).lower() for p in parts], dtype=str))
        if joined[0].size == 0:
            return np.zeros(0, dtype=np.int64)
        needle = text.lower().replace("\0", "")
        return np.flatnonzero(np.char.find(joined[0], needle) >= 0).astype(np.int64)

    return match


def _variable_columns(report: object, var: np.ndarray, debug: object) -> list[Column]:
    graph = report.graph
    names = StringColumn(graph.strings, graph.var_name[var])  # decoded when shown
    debug_names = lazy_debug_column(debug, "name", graph.var_debug[var])
    tiles = variable_tiles(report, var)
    return [
        Column("Variable", names, "The variable's name in the graph."),
        Column(
            "Size", graph.var_bytes[var].astype(np.int64), "Bytes of the whole variable.", "bytes"
        ),
        Column("Tiles", tiles.counts, "How many tiles hold part of it.", "count"),
        Column("Tile list", TileLists(tiles), "The tiles that hold part of it."),
        Column("Debug context", debug_names, "The debug context that created it."),
    ]


def always_live_table(report: object, debug: object = None) -> ColumnTable:
    """Every always-live variable, largest first."""
    graph = report.graph
    debug = debug_of(report, debug)
    var = np.flatnonzero(graph.var_always_live)
    var = var[np.lexsort((var, -graph.var_bytes[var]))]
    columns = _variable_columns(report, var, debug)
    return ColumnTable(columns, matcher=text_matcher(columns[0].values, columns[4].values))


def step_header(step: int) -> str:
    return f"Step {step:,}"


def not_always_live_table(report: object, steps: np.ndarray, debug: object = None) -> ColumnTable:
    """The not-always-live variables live at ``steps``: for one step exactly those
    ``variables_live_at`` lists, largest first; for several, every variable live at any of them
    with its bytes at each step and the difference (largest at any step first)."""
    debug = debug_of(report, debug)
    found = [variables_live_at(report, int(step), debug) for step in steps]
    if len(found) == 1:
        live = found[0]
        columns = _variable_columns(report, live.var, debug)
        columns += [
            Column("Live from", live.first, "First step of its live range.", "count"),
            Column("Live to", live.last, "Last step of its live range (inclusive).", "count"),
        ]
        return ColumnTable(columns, matcher=text_matcher(columns[0].values, columns[4].values))
    var = sorted_unique(np.concatenate([f.var for f in found]))
    per_step = np.zeros((len(found), var.size), dtype=np.int64)
    for row, live in enumerate(found):
        per_step[row, np.searchsorted(var, live.var)] = live.bytes
    order = np.lexsort((var, -per_step.max(axis=0)))
    var, per_step = var[order], per_step[:, order]
    columns = _variable_columns(report, var, debug)
    for step, values in zip(steps.tolist(), per_step, strict=True):
        columns.append(
            Column(step_header(step), values, f"Bytes live at step {step} (0: not live).", "bytes")
        )
    columns.append(Column("Difference", per_step[-1] - per_step[0], DIFFERENCE_HELP, "bytes"))
    return ColumnTable(columns, matcher=text_matcher(columns[0].values, columns[4].values))


def vertices_table(report: object, steps: np.ndarray) -> ColumnTable | str:
    """Vertices per vertex type (codelet) of the compute sets the steps execute; a sentence
    instead when none of the steps runs a compute set."""
    programs = checked_programs(report)
    compute_sets = [int(programs.step_cs[int(step)]) for step in steps]
    if all(cs < 0 for cs in compute_sets):
        kinds = {StepKind(int(programs.step_kind[int(s)])).poplar_name for s in steps}
        return (
            f"The selected step(s) ({', '.join(sorted(kinds))}) run no compute set: only "
            "OnTileExecute steps run vertices."
        )
    found = [compute_set_vertices(report, cs) if cs >= 0 else None for cs in compute_sets]
    types = sorted_unique(np.concatenate([f.vertex_type for f in found if f is not None]))
    counts = np.zeros((len(found), types.size), dtype=np.int64)
    tiles = np.zeros((len(found), types.size), dtype=np.int64)
    for row, f in enumerate(found):
        if f is not None:
            at = np.searchsorted(types, f.vertex_type)
            counts[row, at], tiles[row, at] = f.count, f.tiles
    order = np.lexsort((types, -counts.max(axis=0)))
    types, counts, tiles = types[order], counts[:, order], tiles[:, order]
    graph = report.graph
    names = graph.strings.take(graph.vt_name[types])
    columns = [Column("Vertex type", names, "The codelet the vertices run.")]
    if len(found) == 1:
        columns += [
            Column("Vertices", counts[0], "Vertices of this type in the compute set.", "count"),
            Column("Tiles", tiles[0], "Tiles running at least one of them.", "count"),
        ]
        return ColumnTable(columns)
    for step, c, t in zip(steps.tolist(), counts, tiles, strict=True):
        columns.append(
            Column(f"{step_header(step)} vertices", c, f"Vertices at step {step}.", "count")
        )
        columns.append(Column(f"{step_header(step)} tiles", t, f"Tiles at step {step}.", "count"))
    columns.append(
        Column("Difference", counts[-1] - counts[0], f"Vertices: {DIFFERENCE_HELP}", "count")
    )
    return ColumnTable(columns)


def cycles_table(report: object, steps: np.ndarray) -> ColumnTable:
    """Per selected step and IPU: the step's kind, its modelled cycles on the IPU, and for
    compute steps the minimum, mean and maximum cycles of the IPU's tiles with vertices."""
    programs = checked_programs(report)
    num_ipus = programs.step_cycles.shape[1]
    tiles_per_ipu = int(report.target.tiles_per_ipu)
    rows: dict[str, list] = {k: [] for k in ("step", "name", "kind", "ipu", "cycles", "tiles")}
    balance: dict[str, list] = {"min": [], "mean": [], "max": []}
    strings = report.strings
    for step in (int(s) for s in steps):
        kind = StepKind(int(programs.step_kind[step]))
        name_index = int(programs.step_name[step])
        found = tile_balance(report, step) if int(programs.step_cs[step]) >= 0 else None
        for ipu in range(num_ipus):
            rows["step"].append(step)
            rows["name"].append(strings[name_index] if name_index >= 0 else "")
            rows["kind"].append(kind.poplar_name)
            rows["ipu"].append(f"IPU {ipu}")
            rows["cycles"].append(int(programs.step_cycles[step, ipu]))
            # the balance of this IPU's tiles with vertices (none: zeros)
            cycles = np.zeros(0, dtype=np.int64)
            if found is not None:
                cycles = found.cycles[found.tiles // tiles_per_ipu == ipu]
            rows["tiles"].append(cycles.size)
            balance["min"].append(int(cycles.min()) if cycles.size else 0)
            balance["mean"].append(float(cycles.mean()) if cycles.size else 0.0)
            balance["max"].append(int(cycles.max()) if cycles.size else 0)
    return ColumnTable(
        [
            Column("Step", np.array(rows["step"], dtype=np.int64), "Program step.", "count"),
            Column("Name", rows["name"], "The step's name (its compute set or copy)."),
            Column("Kind", rows["kind"], "Poplar's name for the kind of step."),
            Column("IPU", rows["ipu"], "The IPU the cycles are for."),
            Column(
                "Cycles",
                np.array(rows["cycles"], np.int64),
                "Modelled cycles of the step on this IPU.",
                "count",
            ),
            Column(
                "Tiles computing",
                np.array(rows["tiles"], np.int64),
                "Tiles with vertices in the step's compute set.",
                "count",
            ),
            Column(
                "Min tile cycles",
                np.array(balance["min"], np.int64),
                "The fastest tile's compute cycles.",
                "count",
            ),
            Column(
                "Mean tile cycles",
                np.rint(np.array(balance["mean"], np.float64)).astype(np.int64),
                "Mean compute cycles of the tiles with vertices (rounded).",
                "count",
            ),
            Column(
                "Max tile cycles",
                np.array(balance["max"], np.int64),
                "The slowest tile's compute cycles (the step waits for it).",
                "count",
            ),
        ]
    )
