"""Liveness of some tiles: the bytes of the variables on those tiles live at each program step,
from the live ranges and the tile mapping, and where each variable lives (tile counts, lists).

The whole-device table (``liveness_table``) counts every variable's ``var_bytes``; here a
variable counts only the bytes of its regions on the chosen tiles, so all tiles give exactly
the whole-device numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_liveness, checked_step_labels
from profiler_core.analysis.liveness import LivenessTable
from profiler_core.analysis.tiles import format_tile_selection
from profiler_core.model.unique import sorted_unique


def _region_bytes(graph: Any) -> np.ndarray:
    """Bytes of each tile-mapping region (its elements x its variable's element size)."""
    element_size = graph.var_bytes // np.maximum(graph.var_elements, 1)
    return graph.region_elements.astype(np.int64) * element_size[graph.region_var]


def variable_bytes_on_tiles(report: Any, tiles: np.ndarray) -> np.ndarray:
    """int64 (variables,): the bytes of each variable held on ``tiles``."""
    graph = checked_graph(report)
    num_tiles = report.target.num_tiles
    tiles = np.asarray(tiles, dtype=np.int64)
    if tiles.size and (tiles.min() < 0 or tiles.max() >= num_tiles):
        raise IndexError(f"tiles go from 0 to {num_tiles - 1}")
    chosen = np.zeros(num_tiles, dtype=bool)
    chosen[tiles] = True
    rows = chosen[graph.region_tile]
    per_var = np.zeros(graph.num_variables, dtype=np.int64)
    # np.add.at keeps exact integers (bincount would sum in float64)
    np.add.at(per_var, graph.region_var[rows], _region_bytes(graph)[rows])
    return per_var


def liveness_on_tiles(report: Any, tiles: np.ndarray) -> LivenessTable:
    """Live bytes per program step of the variables' parts on ``tiles``.

    Not-always-live bytes: a difference array over steps (+bytes at each live range's first
    step, -bytes after its last) summed up; always-live bytes: the always-live variables'
    bytes on the tiles.
    """
    liveness = checked_liveness(report)
    programs = checked_step_labels(report)
    graph = report.graph
    per_var = variable_bytes_on_tiles(report, tiles)
    steps = len(liveness.step_live_bytes)
    size = per_var[liveness.interval_var]
    delta = np.zeros(steps + 1, dtype=np.int64)
    np.add.at(delta, liveness.interval_first, size)
    np.add.at(delta, liveness.interval_last.astype(np.int64) + 1, -size)
    always = np.asarray(graph.var_always_live, dtype=bool)
    return LivenessTable(
        not_always_live=np.cumsum(delta[:steps]),
        always_live_bytes=int(per_var[always].sum()),
        step_name=programs.step_name,
        step_kind=programs.step_kind,
    )


def ipu_tiles(report: Any, ipu: int) -> np.ndarray:
    """The tiles of IPU ``ipu`` (tiles are numbered IPU by IPU)."""
    target = report.target
    if not 0 <= ipu < target.num_ipus:
        raise IndexError(f"IPU {ipu}: IPUs go from 0 to {target.num_ipus - 1}")
    return np.arange(ipu * target.tiles_per_ipu, (ipu + 1) * target.tiles_per_ipu)


@dataclass(frozen=True)
class VariableTiles:
    """The tiles holding part of each of some variables, as one sorted array cut per variable."""

    starts: (
        np.ndarray
    )  # int64 (variables + 1,): variable i's tiles are tiles[starts[i]:starts[i+1]]
    tiles: np.ndarray  # int64

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.starts)

    def __len__(self) -> int:
        return len(self.starts) - 1

    def of(self, i: int) -> np.ndarray:
        return self.tiles[self.starts[i] : self.starts[i + 1]]

    def text(self, i: int) -> str:
        """Variable i's tiles as a compact list (``0-15,100``)."""
        return format_tile_selection(self.of(i))


def variable_tiles(report: Any, var: np.ndarray) -> VariableTiles:
    """For each variable of ``var``, the tiles that hold part of it."""
    graph = checked_graph(report)
    var = np.asarray(var, dtype=np.int64)
    num_tiles = np.int64(report.target.num_tiles)
    chosen = np.zeros(graph.num_variables, dtype=bool)
    chosen[var] = True
    wanted = chosen[graph.region_var]  # one lookup per region, not a sort of both
    region_var = graph.region_var[wanted].astype(np.int64)
    pairs = sorted_unique(region_var * num_tiles + graph.region_tile[wanted])
    owner, tile = pairs // num_tiles, pairs % num_tiles
    # pairs are sorted by variable, then tile: each variable's tiles are one slice, gathered
    # in the order of ``var`` (which need not be sorted)
    first = np.searchsorted(owner, var)
    counts = np.searchsorted(owner, var, side="right") - first
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    take = np.repeat(first - starts[:-1], counts) + np.arange(starts[-1])
    return VariableTiles(starts=starts, tiles=tile[take])
