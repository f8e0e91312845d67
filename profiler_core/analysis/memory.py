"""Memory per tile by category, per IPU totals, tiles over the limit, and the variables
that live on a set of tiles."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_memory, debug_of, fail
from profiler_core.analysis.lazy_rows import LazyRows, debug_rows
from profiler_core.model.kinds import ELEMENT_TYPES, MemoryCategory
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings
from profiler_core.model.unique import sorted_unique


@dataclass(frozen=True)
class MemoryTable:
    """``by_category[c, tile]`` bytes, with the tile limit and IPU layout beside it."""

    by_category: np.ndarray  # int64 (categories, tiles)
    bytes_per_tile: int
    tiles_per_ipu: int
    interleaved: np.ndarray | None = None  # int64 (tiles,) bytes in the interleaved region
    _totals: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def num_tiles(self) -> int:
        return int(self.by_category.shape[1])

    @property
    def num_ipus(self) -> int:
        return self.num_tiles // self.tiles_per_ipu

    @staticmethod
    def categories(include_gaps: bool = True) -> list[MemoryCategory]:
        return [c for c in MemoryCategory if include_gaps or not c.is_gap]

    def rows(self, include_gaps: bool = True) -> np.ndarray:
        """The category rows shown: all of them, or all but the gaps."""
        if include_gaps:
            return self.by_category
        return self.by_category[[int(c) for c in self.categories(include_gaps)]]

    def total(self, include_gaps: bool = True) -> np.ndarray:
        """Bytes per tile (computed once per choice, then shared: treat it as read-only)."""
        if include_gaps not in self._totals:
            total = self.rows(include_gaps).sum(axis=0)
            total.flags.writeable = False
            self._totals[include_gaps] = total
        return self._totals[include_gaps]

    def per_ipu(self, include_gaps: bool = True) -> np.ndarray:
        """Bytes per IPU and category, shape (IPUs, categories shown)."""
        rows = self.rows(include_gaps)
        return rows.reshape(rows.shape[0], self.num_ipus, self.tiles_per_ipu).sum(axis=2).T

    def over_limit(self, percent: float = 100.0) -> np.ndarray:
        """Tiles whose memory, gaps included, is above ``percent`` of what a tile has."""
        return np.flatnonzero(self.total(True) * 100.0 > self.bytes_per_tile * percent)

    def breakdown(self, tiles: np.ndarray, include_gaps: bool = True) -> np.ndarray:
        """Bytes per category summed over ``tiles`` (categories as ``categories()``)."""
        return self.rows(include_gaps)[:, self._tiles(tiles)].sum(axis=1)

    def by_region(self) -> np.ndarray:
        """Bytes per tile in the interleaved and the non-interleaved region, gaps included,
        shape (2, tiles); all bytes count as non-interleaved when the report has no split."""
        total = self.total(True)
        interleaved = np.zeros_like(total) if self.interleaved is None else self.interleaved
        interleaved = np.clip(np.asarray(interleaved, dtype=np.int64), 0, total)
        return np.vstack([interleaved, total - interleaved])

    def percent_of_tile(self, include_gaps: bool = True) -> np.ndarray:
        return 100.0 * self.total(include_gaps) / self.bytes_per_tile

    def _tiles(self, tiles: np.ndarray) -> np.ndarray:
        tiles = np.asarray(tiles, dtype=np.int64)
        if tiles.size and (tiles.min() < 0 or tiles.max() >= self.num_tiles):
            raise IndexError(f"tiles go from 0 to {self.num_tiles - 1}")
        return tiles


def memory_table(report: Any) -> MemoryTable:
    """The memory of every tile; raises ReportError when the section does not fit the target."""
    by_category = checked_memory(report)
    target = report.target
    if target.bytes_per_tile < 1:
        fail(report, "target", f"{target.bytes_per_tile} bytes per tile")
    interleaved = np.asarray(report.memory.interleaved, dtype=np.int64)
    return MemoryTable(
        np.asarray(by_category, dtype=np.int64),
        int(target.bytes_per_tile),
        int(target.tiles_per_ipu),
        interleaved if interleaved.shape == (by_category.shape[1],) else None,
    )


@dataclass(frozen=True)
class VariablesOnTiles:
    """Variables with bytes on a set of tiles, largest first."""

    var: np.ndarray  # int64 variable ids
    bytes: np.ndarray  # int64 bytes on the selected tiles
    total_bytes: np.ndarray  # int64 bytes of the whole variable
    tiles: np.ndarray  # int64 how many of the selected tiles hold part of it
    always_live: np.ndarray  # bool
    is_constant: np.ndarray  # bool
    names: Sequence[str]
    types: list[str]
    # made per row when read (a table shows a few of 20,000): equal to lists of strings
    debug_names: Sequence[str]  # the debug context's name ("" without debug.cbor)
    layers: Sequence[str]
    ops: Sequence[str]
    _shape_offsets: np.ndarray = field(repr=False, compare=False)
    _shape_dims: np.ndarray = field(repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.var)

    @cached_property
    def shapes(self) -> LazyRows:
        """``[2,3]`` per row, made when a row is read (a person reads a few of them)."""
        # Each row's offsets looked up when its rows are read: 400,000 rows of Python ints
        # were 29 MB of the peak, and two int64 columns of them 6 MB.
        offsets, dims, var = self._shape_offsets, self._shape_dims, self.var

        def shape(i: int) -> str:
            v = int(var[i])
            return "[" + ",".join(map(str, dims[offsets[v] : offsets[v + 1]].tolist())) + "]"

        def shapes(start: int, stop: int) -> list[str]:
            if start >= stop:
                return []
            # The rows' dimensions gathered as one list and cut per row: no numpy slice per
            # row, and only these rows' dimensions (rows by size are far apart in dims).
            begin = offsets[var[start:stop]]
            lengths = np.maximum(offsets[var[start:stop] + 1] - begin, 0)
            cut = np.concatenate(([0], np.cumsum(lengths)))
            at = np.repeat(begin - cut[:-1], lengths) + np.arange(cut[-1])
            if at.size and (at.min() < 0 or at.max() >= len(dims)):  # damaged offsets
                return [shape(i) for i in range(start, stop)]
            flat = list(map(str, dims[at].tolist()))
            edges = cut.tolist()
            return ["[" + ",".join(flat[b:e]) + "]" for b, e in pairwise(edges)]

        return LazyRows(len(var), shape, shapes)

    @cached_property
    def _searchable(self) -> np.ndarray:
        """Each row's name, debug context, layer and op, lower-cased, made once."""
        fields = zip(self.names, self.debug_names, self.layers, self.ops, strict=True)
        return np.array(["\0".join(parts).lower() for parts in fields], dtype=str)

    def matching(self, text: str) -> np.ndarray:
        """Rows whose name, debug context, layer or op contains ``text`` (case-insensitive);
        one vectorised search per keystroke, so a search box stays responsive."""
        needle = text.lower().replace("\0", "")
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(np.char.find(self._searchable, needle) >= 0).astype(np.int64)


def variables_on_tiles(report: Any, tiles: np.ndarray, debug: Any = None) -> VariablesOnTiles:
    """Every variable with elements on ``tiles``, largest first.

    ``debug`` (a DebugData) adds debug contexts; by default they come from the report when
    its debug.cbor loads.
    """
    g = checked_graph(report)
    debug = debug_of(report, debug)
    num_tiles = report.target.num_tiles
    # One boolean tile mask looked up by every region: O(regions), whatever the selection.
    selected = np.zeros(num_tiles, dtype=bool)
    tiles = np.asarray(tiles, dtype=np.int64)
    if tiles.size and (tiles.min() < 0 or tiles.max() >= num_tiles):
        raise IndexError(f"tiles go from 0 to {num_tiles - 1}")
    selected[tiles] = True
    in_selection = selected[g.region_tile]
    region_var = g.region_var[in_selection].astype(np.int64)
    elem_size = g.var_bytes // np.maximum(g.var_elements, 1)
    region_bytes = g.region_elements[in_selection] * elem_size[region_var]
    del elem_size
    n = g.num_variables
    per_var = np.zeros(n, dtype=np.int64)
    np.add.at(per_var, region_var, region_bytes)  # exact integers, unlike bincount's floats
    del region_bytes
    # Each (variable, tile) pair once; the temporaries are dropped as soon as they are used
    # (400,000 variables: every one of these arrays is 3-4 MB of the command's peak).
    pair = region_var * num_tiles
    del region_var
    pair += g.region_tile[in_selection]
    del in_selection
    pair = sorted_unique(pair)
    pair //= num_tiles
    tile_count = np.bincount(pair, minlength=n)
    del pair
    var = np.flatnonzero(per_var)
    var = var[np.lexsort((var, -per_var[var]))]
    debug_ids = g.var_debug[var]
    return VariablesOnTiles(
        var=var,
        bytes=per_var[var],
        total_bytes=g.var_bytes[var].astype(np.int64),
        tiles=tile_count[var].astype(np.int64),
        always_live=g.var_always_live[var].astype(bool),
        is_constant=g.var_is_constant[var].astype(bool),
        names=_names(g.strings, g.var_name[var]),
        types=_type_names(g.var_type[var]),
        debug_names=debug_rows(debug, "name", debug_ids),
        layers=debug_rows(debug, "layer", debug_ids),
        ops=debug_rows(debug, "op", debug_ids),
        _shape_offsets=g.var_shape_offsets,
        _shape_dims=g.var_shape_dims,
    )


def _names(strings: Any, indices: np.ndarray) -> Sequence[str]:
    """Variable names decoded when read: decoding 20,000 names costs more than the rest of
    the answer, and a table shows a few dozen."""
    if isinstance(strings, Strings):
        return StringColumn(strings, indices)
    indices = indices.tolist()
    return LazyRows(len(indices), lambda i: strings[indices[i]] if indices[i] >= 0 else "")


def _type_names(codes: np.ndarray) -> list[str]:
    """Element type names by one table lookup (a code past the known types is named by
    its number)."""
    codes = np.asarray(codes, dtype=np.int64)
    top = int(codes.max(initial=-1)) + 1
    names = np.array(
        [ELEMENT_TYPES[c] if c < len(ELEMENT_TYPES) else f"type {c}" for c in range(top)],
        dtype=object,
    )
    return names[codes].tolist() if top else []
