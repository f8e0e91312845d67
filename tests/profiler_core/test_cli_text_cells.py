"""The CLI's aligned text tables (formatted a column at a time, distinct integers once)
equal a table formatted cell by cell, written out plainly here, for every kind of column:
integer arrays with few or many distinct values, negatives, booleans, floats, names as
lists, string-table columns and rows made when read; across several text chunks."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from profiler_core.analysis.lazy_rows import LazyRows
from profiler_core.cli import tables
from profiler_core.cli.tables import Table, render_text
from profiler_core.model.lazy_columns import StringColumn


def cell(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{int(value):,}"
    if isinstance(value, float | np.floating):
        return f"{value:,.2f}" if math.isfinite(value) else str(float(value))
    return str(value)


def by_cell(table: Table) -> str:
    names = list(table.columns)
    columns = [[table.columns[n][i] for i in range(len(table))] for n in names]
    numeric = [
        all(isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool
            | np.bool_) for v in c) for c in columns
    ]  # fmt: skip
    cells = [[cell(v) for v in c] for c in columns]
    widths = [max([len(n), *map(len, c)]) for n, c in zip(names, cells, strict=True)]

    def line(values):
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    n = len(table)
    title = f"{table.name} ({n} rows)" if n != 1 else table.name
    lines = [title, line(names), line(["-" * w for w in widths])]
    lines += [line([c[i] for c in cells]) for i in range(n)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(20))
def test_text_equals_a_table_formatted_cell_by_cell(seed, monkeypatch):
    monkeypatch.setattr(tables, "TEXT_CHUNK_ROWS", 50)  # several chunks of 50 rows
    rng = random.Random(seed)
    n = rng.choice([0, 1, 5, 61, 230])
    words = ["m1", "matMul", "", "é/x", "layer 3 ", "a"]
    np_rng = np.random.default_rng(seed)
    columns = {
        "few": np_rng.integers(0, 3, n),  # a few distinct values: formatted once each
        "few_big": np_rng.choice([0, 1_234_567, -5_000, 10**12], n),
        "many": np_rng.integers(-(10**9), 10**9, n),
        "unsigned": np_rng.integers(0, 2**40, n).astype(np.uint64),
        "live": np_rng.integers(0, 2, n).astype(bool),
        "ratio": np.round(np_rng.normal(size=n) * 1000, 3),
        "name": [rng.choice(words) for _ in range(n)],
        "context": StringColumn.from_list([rng.choice(words) for _ in range(n)]),
        "made": LazyRows(n, lambda i: f"[{i},{i % 3}]"),
        "last": [rng.choice(words) for _ in range(n)],  # trailing spaces are stripped
    }
    table = Table("random", columns)
    assert render_text([table]) == by_cell(table)
