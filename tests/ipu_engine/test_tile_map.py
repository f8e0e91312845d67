"""The tile mapping as intervals equals a per-element column painted the same way."""

from __future__ import annotations

import numpy as np

from ipu_engine.poplar.tile_map import UNMAPPED, TileMap


def test_paints_equal_a_per_element_column() -> None:
    rng = np.random.default_rng(5)
    tile_map = TileMap()
    sizes = [0, 37, 1, 120, 64, 0, 9]
    for n in sizes:
        tile_map.add_variable(n)
    column = np.full(sum(sizes), UNMAPPED, dtype=np.int32)
    for _ in range(60):
        kind = rng.integers(3)
        if kind == 0:  # runs (some crossing variables, some overlapping)
            start = rng.integers(0, column.size, 4)
            length = rng.integers(0, 30, 4)
            tiles = rng.integers(0, 8, 4)
            tile_map.paint(start, np.minimum(length, column.size - start), tiles)
            for s, n, t in zip(start, np.minimum(length, column.size - start), tiles, strict=True):
                column[s : s + n] = t
        elif kind == 1:  # elements at addresses
            addr = rng.choice(column.size, 15, replace=False)
            tiles = rng.integers(0, 8, 15)
            tile_map.paint_elements(addr, tiles)
            column[addr] = tiles
        else:  # a slice, one tile
            b = int(rng.integers(0, column.size))
            e = int(rng.integers(b, column.size + 1))
            tile_map.paint_elements(slice(b, e), 3)
            column[b:e] = 3
        assert np.array_equal(tile_map.element_tiles(slice(0, column.size)), column)
        addr = rng.integers(0, column.size, 50)
        assert np.array_equal(tile_map.element_tiles(addr), column[addr])
        # slices inside one variable (read from its own intervals) and across variables
        b = int(rng.integers(0, column.size))
        e = int(rng.integers(b, column.size + 1))
        assert np.array_equal(tile_map.element_tiles(slice(b, e)), column[b:e])
        v = int(rng.choice(np.flatnonzero(sizes)))
        first = sum(sizes[:v])
        b = first + int(rng.integers(0, sizes[v]))
        e = int(rng.integers(b + 1, first + sizes[v] + 1))
        assert np.array_equal(tile_map.element_tiles(slice(b, e)), column[b:e])
    var, start, elements, tile = tile_map.variable_intervals()
    assert elements.sum() == column.size
    bases = np.cumsum([0, *sizes[:-1]])
    for v, s, n, t in zip(var, start, elements, tile, strict=True):
        assert (column[bases[v] + s : bases[v] + s + n] == t).all()
        assert s + n <= sizes[v]


def test_joined_intervals_follow_mapping_of_earlier_and_new_variables() -> None:
    """The joined intervals are brought up to date from the first variable changed: after
    new variables, remapping an earlier one, and an empty variable, they give every
    element the tile a plain per-element array painted the same way gives."""
    rng = np.random.default_rng(3)
    tiles = TileMap()
    flat = np.zeros(0, dtype=np.int32)
    for step in range(40):
        if step % 3 == 0 or tiles.size == 0:
            n = int(rng.integers(0, 30))
            tiles.add_variable(n)
            flat = np.append(flat, np.full(n, -1, dtype=np.int32))
        else:
            start = int(rng.integers(0, tiles.size))
            length = int(rng.integers(1, tiles.size - start + 1))
            tile = int(rng.integers(0, 5))
            tiles.paint(np.array([start]), np.array([length]), tile)
            flat[start : start + length] = tile
        starts, interval_tiles = tiles.runs()
        ends = np.append(starts[1:], tiles.size)
        np.testing.assert_array_equal(np.repeat(interval_tiles, ends - starts), flat)
