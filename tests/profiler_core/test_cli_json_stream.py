"""Streamed ``--json`` against ``json.dumps`` of the whole document (the reference, made
independently of json_stream's column formatting): every kind of cell, tables at every
depth, several chunks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from profiler_core.cli import json_stream
from profiler_core.cli.json_stream import iter_json, render_json
from profiler_core.cli.tables import Table
from profiler_core.model.lazy_columns import StringColumn


def reference(document: dict) -> str:
    """json.dumps of the document with each table as records built value by value."""

    def plain(value):
        if isinstance(value, Table):
            names = list(value.columns)
            return [
                {name: plain(value.columns[name][i]) for name in names} for i in range(len(value))
            ]
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        if isinstance(value, np.ndarray):
            return plain(value.tolist())
        if isinstance(value, np.generic):
            return plain(value.item())
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    return json.dumps(plain(document), indent=2, allow_nan=False, default=str) + "\n"


def mixed_table(n: int) -> Table:
    rng = np.random.default_rng(7)
    floats = rng.normal(size=n) * 1e6
    floats[::5] = np.nan
    floats[1::7] = np.inf
    names = [f'op {i} \u00e9 "q" \\ %s' if i % 3 else "" for i in range(n)]
    return Table(
        "mixed rows",
        {
            "int64": rng.integers(-(2**40), 2**40, size=n),
            "uint8": rng.integers(0, 255, size=n).astype(np.uint8),
            "bool": rng.integers(0, 2, size=n).astype(bool),
            "float64": floats,
            "finite_float32": rng.normal(size=n).astype(np.float32),
            "name %d": names,
            "strings": StringColumn.from_list(names),
            "maybe": [None if i % 4 == 0 else (i if i % 2 else float(i) / 3) for i in range(n)],
            "shape": [[i, [i + 1, {"k": i % 2 == 0}]] if i % 2 else (i,) for i in range(n)],
            "numpy_scalars": [np.float32(i / 8) if i % 2 else np.int32(-i) for i in range(n)],
            "ratio": [float("nan") if i % 6 == 0 else i / 7 for i in range(n)],
        },
    )


@pytest.mark.parametrize("rows", [0, 1, 2, 3, 7, 10])
def test_streamed_json_equals_json_dumps(monkeypatch, rows):
    monkeypatch.setattr(json_stream, "JSON_CHUNK_ROWS", 3)  # several chunks and a short one
    table = mixed_table(rows)
    document = {
        "header": {"a": 1, "nan": float("nan"), "array": np.arange(3), "n": np.int64(5)},
        "top": table,
        "nested": {"deeper": [table, {"again": table}], "empty": Table("none", {})},
        "after": "text",
    }
    assert render_json(document) == reference(document)
    pieces = list(iter_json(document))
    assert "".join(pieces) == reference(document)
    if rows == 10:  # written a chunk at a time: no piece holds the whole table
        assert max(map(len, pieces)) < len(render_json({"top": table})) / 2


def test_a_table_named_like_the_marker_is_its_own_text():
    table = Table("t", {"name": ["popvision-table-x-0"], "v": np.array([1])})
    document = {"popvision-table-x-0": table, "s": "popvision-table-x-0"}
    assert render_json(document) == reference(document)
