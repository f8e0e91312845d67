"""Element pools: the graph's storage for one element type, and each element's tile.

Every variable and constant of a type is a contiguous range of its pool, so an element
address is one integer and views are integer arrays. The tile mapping is kept as
intervals per variable (``tile_map.TileMap``), not one tile per element.
"""

from __future__ import annotations

import numpy as np

from ipu_engine.common.types import Type
from ipu_engine.poplar.arrays import search_many
from ipu_engine.poplar.tile_map import UNMAPPED, TileMap

__all__ = ["UNMAPPED", "ElementPool", "split_by_tile"]


class ElementPool:
    """All elements of one type in a graph: their count, their tiles, their variables."""

    def __init__(self, elem_type: Type) -> None:
        self.type = elem_type
        self.tiles = TileMap()
        self.var_base: list[int] = []  # first address of each variable in this pool
        self.var_id: list[int] = []  # graph-wide variable id of each of those
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def size(self) -> int:
        return self.tiles.size

    def allocate(self, n: int, var_id: int) -> int:
        begin = self.tiles.add_variable(n)
        self.var_base.append(begin)
        self.var_id.append(var_id)
        self._arrays = None
        return begin

    def bases_and_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """The variables' first addresses and graph-wide ids as arrays (made once per set
        of variables)."""
        if self._arrays is None:
            self._arrays = (
                np.asarray(self.var_base, dtype=np.int64),
                np.asarray(self.var_id, dtype=np.int64),
            )
        return self._arrays

    def variables_of(self, addr: np.ndarray) -> np.ndarray:
        """Graph-wide variable id of each address."""
        bases, ids = self.bases_and_ids()
        return ids[search_many(bases, addr) - 1]

    def variables_touched(self, addr: np.ndarray) -> np.ndarray:
        """The distinct variable ids of ``addr``, sorted, in one pass (no sort of addr)."""
        if addr.size == 0:
            return np.zeros(0, dtype=np.int64)
        bases, ids = self.bases_and_ids()
        touched = np.zeros(len(bases), dtype=bool)
        touched[search_many(bases, addr) - 1] = True
        return ids[touched]

    def variables_in_runs(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """The distinct variable ids that runs ``[start, start + length)`` touch, sorted."""
        keep = length > 0
        if not keep.any():
            return np.zeros(0, dtype=np.int64)
        bases, ids = self.bases_and_ids()
        first = search_many(bases, start[keep]) - 1
        last = search_many(bases, start[keep] + length[keep] - 1) - 1
        marks = np.zeros(len(bases) + 1, dtype=np.int64)
        np.add.at(marks, first, 1)
        np.add.at(marks, last + 1, -1)
        return ids[np.cumsum(marks[:-1]) > 0]

    def tile_runs(self) -> tuple[np.ndarray, np.ndarray]:
        """The tile mapping as intervals: (first address, tile) of each run of elements
        that share a tile, in address order."""
        return self.tiles.runs()


_CHUNK_RUNS = 1 << 20  # runs cut at a time: bounds the working arrays of a cut


def split_by_tile(
    tile_runs: tuple[np.ndarray, np.ndarray],
    pool_size: int,
    start: np.ndarray,
    length: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cut runs where the tile mapping changes: (piece start, piece length, tile of its
    elements, index of the run it came from). Millions of runs (a broadcast operand's
    one-element runs) are cut a chunk at a time, the pieces in the same order."""
    if start.size <= _CHUNK_RUNS:
        return _split_by_tile(tile_runs, pool_size, start, length)
    parts = []
    for lo in range(0, start.size, _CHUNK_RUNS):
        hi = lo + _CHUNK_RUNS
        p_start, p_length, tile, run = _split_by_tile(
            tile_runs, pool_size, start[lo:hi], length[lo:hi]
        )
        parts.append((p_start, p_length, tile, run + lo))
    p_start, p_length, tile, run = (np.concatenate(p) for p in zip(*parts, strict=True))
    return p_start, p_length, tile, run


def _split_by_tile(
    tile_runs: tuple[np.ndarray, np.ndarray],
    pool_size: int,
    start: np.ndarray,
    length: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    run_start, run_tile = tile_runs
    keep = np.flatnonzero(length > 0)
    start, length = start[keep], length[keep]
    # search only the tile runs the addresses fall in: a field's runs lie in a few
    # variables, so a window of the pool's runs (ResNet-50: of 10M) answers every search
    # in cache, with no sort of the needles
    base = 0
    if start.size:
        base = max(int(np.searchsorted(run_start, start.min(), side="right")) - 1, 0)
        stop = int(np.searchsorted(run_start, int((start + length).max()), side="left"))
        window = run_start[base : max(stop, base + 1)]
    else:
        window = run_start
    first = search_many(window, start) - 1 + base
    following = first + 1
    first_end = np.full(first.size, pool_size, dtype=np.int64)
    inside = following < run_start.size
    first_end[inside] = run_start[following[inside]]
    if bool((start + length <= first_end).all()):  # no run crosses a tile: one piece each
        return start, length, run_tile[first], keep
    last = search_many(window, start + length - 1) - 1 + base
    count = last - first + 1
    source = np.repeat(np.arange(start.size), count)
    offset_in_run = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    piece_run = first[source] + offset_in_run
    following = piece_run + 1
    run_end = np.full(piece_run.size, pool_size, dtype=np.int64)
    inside = following < run_start.size
    run_end[inside] = run_start[following[inside]]
    p_start = np.maximum(start[source], run_start[piece_run])
    p_end = np.minimum(start[source] + length[source], run_end)
    return p_start, p_end - p_start, run_tile[piece_run], keep[source]
