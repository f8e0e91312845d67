"""The not-always-live area of each tile: the most bytes live at once, against a count
step by step over random live ranges (touching and nested ranges, many tiles)."""

from __future__ import annotations

import numpy as np

from ipu_engine.poplar.cost_model.liveness import Liveness, peak_per_tile


def _peak_step_by_step(liveness: Liveness, var, tile, size, num_tiles: int) -> np.ndarray:
    peak = np.zeros(num_tiles, dtype=np.int64)
    for step in range(int(liveness.last.max()) + 1):
        live = np.zeros(num_tiles, dtype=np.int64)
        for v, t, b in zip(var.tolist(), tile.tolist(), size.tolist(), strict=True):
            if not liveness.always_live[v] and liveness.first[v] <= step <= liveness.last[v]:
                live[t] += b
        peak = np.maximum(peak, live)
    return peak


def test_peak_per_tile_is_the_most_bytes_live_at_one_step() -> None:
    rng = np.random.default_rng(11)
    n_vars, num_tiles = 60, 7
    first = rng.integers(0, 12, n_vars)
    last = first + rng.integers(0, 5, n_vars)  # ranges that end where others begin
    always = rng.random(n_vars) < 0.2
    liveness = Liveness(always, np.where(always, -1, first), np.where(always, -1, last))
    var = rng.integers(0, n_vars, 300).astype(np.int32)  # several regions per variable
    tile = rng.integers(0, num_tiles - 1, 300).astype(np.int32)  # the last tile holds none
    size = rng.integers(1, 500, 300).astype(np.int64)
    got = peak_per_tile(liveness, var, tile, size, num_tiles)
    np.testing.assert_array_equal(got, _peak_step_by_step(liveness, var, tile, size, num_tiles))
    assert got[-1] == 0


def test_a_range_ending_as_another_begins_does_not_overlap_it() -> None:
    """Variable 0 lives over steps 0..2 and variable 1 over 3..5 on tile 0: 100 bytes
    at most, not 100 + 40; variable 2 (always live) is not in the shared area."""
    liveness = Liveness(np.array([False, False, True]), np.array([0, 3, -1]), np.array([2, 5, -1]))
    var = np.array([0, 1, 2], dtype=np.int32)
    tile = np.zeros(3, dtype=np.int32)
    size = np.array([100, 40, 1000], dtype=np.int64)
    np.testing.assert_array_equal(peak_per_tile(liveness, var, tile, size, 2), [100, 0])
