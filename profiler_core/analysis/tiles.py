"""Tile selections as users type them: ``0,5,100-120``."""

from __future__ import annotations

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.model.unique import sorted_unique


class SelectionError(ReportError):
    """A tile selection that cannot be understood; the message says which part."""

    def __init__(self, problem: str) -> None:
        super().__init__(None, problem)


def parse_tile_selection(text: str, num_tiles: int) -> np.ndarray:
    """Sorted unique tiles of ``"0,5,100-120"`` (ranges inclusive); empty text selects none."""
    tiles: list[np.ndarray] = []
    for part in (p.strip() for p in text.replace(";", ",").split(",")):
        if not part:
            continue
        first, sep, last = part.partition("-")
        try:
            begin = int(first)
            end = int(last) if sep else begin
        except ValueError:
            raise SelectionError(
                f"{part!r} is not a tile or a range of tiles such as 5 or 100-120"
            ) from None
        if begin > end:
            raise SelectionError(f"{part!r}: a range goes from the lower tile to the higher")
        if begin < 0 or end >= num_tiles:
            raise SelectionError(f"{part!r}: tiles go from 0 to {num_tiles - 1}")
        tiles.append(np.arange(begin, end + 1))
    if not tiles:
        return np.zeros(0, dtype=np.int64)
    return sorted_unique(np.concatenate(tiles))


def format_tile_selection(tiles: np.ndarray) -> str:
    """The shortest text ``parse_tile_selection`` turns back into ``tiles``."""
    tiles = sorted_unique(np.asarray(tiles, dtype=np.int64))
    if tiles.size == 0:
        return ""
    breaks = np.flatnonzero(np.diff(tiles) != 1) + 1
    parts = []
    for run in np.split(tiles, breaks):
        first, last = int(run[0]), int(run[-1])
        parts.append(str(first) if first == last else f"{first}-{last}")
    return ",".join(parts)
