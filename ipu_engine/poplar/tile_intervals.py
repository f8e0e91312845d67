"""Poplar's per-tile interval lists (``setTileMapping(t, [[(begin, end), ...], ...])``),
read as integer pairs and checked: each element of a tensor lives on one tile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.common.arguments import integer_arg
from ipu_engine.common.errors import TileMappingError


def is_interval_lists(tile: Any) -> bool:
    """Whether ``tile`` is Poplar's per-tile interval lists rather than one tile."""
    if isinstance(tile, str | bytes | Mapping | int | float | np.generic) or tile is None:
        return False
    return hasattr(tile, "__iter__")


def tile_intervals(intervals: Any, tile_id: int, what: str) -> list[tuple[int, int]]:
    """The ``(begin, end)`` pairs given for one tile, as integers."""
    bad = TileMappingError(
        f"{what}: the intervals of tile {tile_id} must be (begin, end) pairs of integers, "
        f"got {intervals!r:.60}"
    )
    if not is_interval_lists(intervals):
        raise bad
    out = []
    for pair in intervals:
        if not is_interval_lists(pair):
            raise bad
        pair = tuple(pair)
        if len(pair) != 2:
            raise bad
        out.append(
            tuple(
                integer_arg(x, f"{what}: tile {tile_id} interval", TileMappingError) for x in pair
            )
        )
    return out


def check_disjoint(begins: np.ndarray, ends: np.ndarray, tiles: np.ndarray, name: str) -> None:
    """Each element is on one tile: intervals given to two tiles (or twice) must not overlap
    (the last one painted would silently win)."""
    used = ends > begins
    order = np.argsort(begins[used], kind="stable")
    b, e, t = begins[used][order], ends[used][order], tiles[used][order]
    clash = np.flatnonzero(b[1:] < e[:-1])
    if clash.size:
        k = int(clash[0])
        raise TileMappingError(
            f"tile mapping of {name!r}: interval [{b[k]}, {e[k]}) on tile {t[k]} overlaps "
            f"[{b[k + 1]}, {e[k + 1]}) on tile {t[k + 1]}; each element lives on one tile"
        )
