"""The CLI's text tables are formatted a chunk of rows at a time and written as they are
made; the text is the same as one whole aligned table, whatever the chunk size."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import profiler_core.cli.tables as tables
from profiler_core.cli.tables import Table, iter_text, render_text


def _reference(table: Table) -> str:
    """The table aligned cell by cell, the obvious way (what the fast path must equal)."""
    names = list(table.columns)
    cells = [tables._column_cells(v) for v in table.columns.values()]
    numeric = [tables._is_numeric_column(v) for v in table.columns.values()]
    widths = [max([len(n)] + [len(c) for c in col]) for n, col in zip(names, cells, strict=True)]

    def line(values):
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    lines = [f"{table.name} ({len(table)} rows)" if len(table) != 1 else table.name]
    lines += [line(names), line(["-" * w for w in widths])]
    lines += [line(row) for row in zip(*cells, strict=True)]
    return "\n".join(lines + table.notes)


@pytest.mark.parametrize("chunk", [1, 2, 5, 1 << 15])
def test_chunked_text_equals_the_whole_table(monkeypatch, chunk):
    monkeypatch.setattr(tables, "TEXT_CHUNK_ROWS", chunk)
    rng = np.random.default_rng(3)
    table = Table(
        "operations by name",
        {
            "name": ["a", "much longer name", "", "x" * 7, "b", "c", "d"],
            "cycles": rng.integers(-(10**12), 10**12, 7),  # widest at either extreme
            "ratio": [0.5, float("nan"), 1e9, -2.25, 0.0, 3.0, float("inf")],
            "flag": [True, False, True, True, False, False, True],
            "last": ["", "", "", "", "", "", ""],  # all blank: rows lose trailing spaces
        },
        notes=["a note"],
    )
    header = [("report", "x"), ("runs", "2")]
    expected = (
        "\n\n".join(
            [
                "\n".join(f"{k + ':':<7} {v}" for k, v in header),
                _reference(table),
                _reference(table),
            ]
        )
        + "\n"
    )
    assert render_text([table, table], header) == expected
    pieces = list(iter_text([table, table], header))
    assert "".join(pieces) == expected
    assert len(pieces) >= 2 * (7 // chunk)  # really written a chunk at a time


def test_an_empty_table_and_no_tables():
    empty = Table("nothing", {"a": np.zeros(0, np.int64), "b": []})
    assert render_text([empty]) == "nothing (0 rows)\na  b\n-  -\n"
    assert render_text([]) == ""


def test_compares_long_form_equals_reading_it_record_by_record():
    from profiler_core.cli.compare_command import _long_form

    side = Table("memory", {"category": ["x", "y"], "a": np.array([1, 2]),
                            "b": np.array([3, 1]), "diff": np.array([2, -1])})  # fmt: skip
    matched = Table("operations", {
        "key": ["p", "q", "r"], "in_a": np.array([True, True, False]),
        "in_b": np.array([True, False, True]),
        "cycles_a": np.array([5, 6, 0]), "cycles_b": np.array([7, 0, 9]),
        "cycles_diff": np.array([2, -6, 9]),
        "bytes_a": np.array([1.5, 0.0, 0.0]), "bytes_b": np.array([2.5, 0.0, 4.0]),
        "bytes_diff": np.array([1.0, 0.0, 4.0]),
    })  # fmt: skip
    expected = []
    for table in (side, matched):
        names = list(table.columns)
        pairs = [n[:-2] for n in names if n.endswith("_a") and n != "in_a"]
        for record in table.records():
            for column in pairs or ["value"]:
                a = record[f"{column}_a"] if pairs else record["a"]
                b = record[f"{column}_b"] if pairs else record["b"]
                expected.append([table.name, record[names[0]], column, a, b, b - a])
    rows = _long_form([side, matched]).rows()
    assert rows == expected
    assert [type(v) for v in rows[-1]] == [type(v) for v in expected[-1]]  # 4.0 stays a float


def test_csv_is_written_a_chunk_at_a_time_as_it_would_be_whole(monkeypatch):
    from profiler_core.cli import compare_command
    from profiler_core.cli.output import Output

    monkeypatch.setattr(tables, "TEXT_CHUNK_ROWS", 2)
    monkeypatch.setattr(compare_command, "LONG_FORM_CHUNK_ROWS", 2)
    matched = Table("operations", {
        "key": ["p", "q,r", 'say "x"', "t", "u"], "in_a": np.array([True] * 5),
        "in_b": np.array([True, False, True, True, True]),
        "cycles_a": np.arange(5), "cycles_b": np.arange(5) * 3, "cycles_diff": np.arange(5) * 2,
    })  # fmt: skip
    whole = compare_command._long_form([matched, matched])
    assert len(whole) == 10
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(whole.columns))
    writer.writerows(whole.rows())
    pieces = list(Output([matched], csv_table=lambda: compare_command._long_form_chunks(
        [matched, matched])).render_pieces("csv"))  # fmt: skip
    assert "".join(pieces) == out.getvalue() == tables.render_csv(whole)
    assert len(pieces) >= 6  # three chunks of each table, each written as it is made
    nothing = Output([], csv_table=lambda: compare_command._long_form_chunks([]))
    assert nothing.render("csv") == "table,key,column,a,b,diff\n"
