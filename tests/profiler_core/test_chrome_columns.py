"""A Chrome import's stamp columns are joined a chunk at a time (issue 28): the ns column,
its smallest stamp and its largest magnitude are what numpy gives on the whole column
joined, for int stamps, float stamps and a mix (where every int turns float)."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.trace import chrome_columns
from profiler_core.trace.chrome_columns import Column


def _column(parts: list[np.ndarray], rows: list[int | float]) -> Column:
    column = Column()
    for part in parts:
        column.extend(part.copy())
    for row in rows:  # the per-event path's rows, after the chunks
        column.append(row)
    return column


def _ns(joined: np.ndarray, base: int | float, scale: int) -> list[int]:
    """ns from ``base`` by the format's rule, on the whole joined column."""
    if joined.dtype == np.int64 and isinstance(base, int | np.integer):
        return ((joined - int(base)) * scale).tolist()
    return np.round((joined.astype(np.float64) - base) * scale).astype(np.int64).tolist()


CASES = {
    "int": ([np.array([5, 3, 9], np.int64), np.array([2**53 + 1, 7], np.int64)], [11]),
    "float": ([np.array([1.5, 0.25]), np.array([3.75])], [2.5]),
    "mixed": ([np.array([2**53 + 1, -4], np.int64), np.array([0.5, 1e6 + 0.125])], [3]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_stamps_joined_a_chunk_at_a_time_are_the_joined_columns(case, monkeypatch) -> None:
    monkeypatch.setattr(chrome_columns, "_RELEASE_BYTES", 8)  # hand back after every chunk
    parts, rows = CASES[case]
    joined = np.concatenate([*parts, np.array(rows)])
    assert _column(parts, rows).dtype_joined() == joined.dtype
    low = _column(parts, rows).lowest()
    assert low == joined.min() and low.dtype == joined.dtype
    assert _column(parts, rows).highest_abs() == abs(joined).max()
    for base, scale in [(0, 1000), (joined.min(), 1000), (joined.min(), 1)]:
        got = _column(parts, rows).relative_ns(base, scale)
        assert got.dtype == np.int64 and got.tolist() == _ns(joined, base, scale)


def test_ids_renumbered_while_joined() -> None:
    column = Column(np.int32)
    column.extend(np.array([0, 2], np.int32))
    column.extend(np.array([1, 1, 0], np.int32))
    column.append(2)
    table = np.array([7, 9, 8], np.int32)
    got = column.looked_up(table)
    assert got.dtype == np.int32 and got.tolist() == [7, 8, 9, 9, 7, 8]


def test_small_chunks_and_rows_keep_their_order_when_staged_into_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # chunks are staged into parts of _PART_ROWS (the native path's thousands of small
    # chunks): interleaved with rows and of two dtypes, the column is still each value in
    # the order it came, with the stamps' dtype rule
    monkeypatch.setattr(chrome_columns, "_PART_ROWS", 7)
    rng = np.random.default_rng(3)
    column, expected = Column(), []
    for k in range(200):
        if k % 9 == 4:
            row = int(rng.integers(-50, 50)) if k % 2 else float(rng.integers(-50, 50)) + 0.5
            column.append(row)
            expected.append(row)
        else:
            part = rng.integers(-(2**40), 2**40, int(rng.integers(0, 5)))
            part = part.astype(np.float64) + 0.25 if k % 5 == 0 else part
            column.extend(part)
            expected += part.tolist()
        assert len(column) == len(expected)
        if k % 50 == 49:  # the largest value, read mid-way as the builder reads it
            assert column.max() == max(expected)
    assert column.dtype_joined() == np.float64
    assert column.array().tolist() == np.array(expected, np.float64).tolist()
    ints = Column(np.int32)
    for k in range(30):
        ints.extend(np.arange(k, dtype=np.int32))
    assert ints.array().tolist() == [i for k in range(30) for i in range(k)]
