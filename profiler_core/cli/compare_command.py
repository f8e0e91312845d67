"""``popvision-cli compare A B``: memory per category, cycles per step kind and operations of
two reports side by side with differences (B minus A); variables and steps on request."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from itertools import chain

import numpy as np

from profiler_core.analysis.compare import compare_reports
from profiler_core.analysis.matching import Matched
from profiler_core.cli.output import Output, category_column
from profiler_core.cli.tables import Table, TextColumn
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.report import Report

#: The operations columns shown (only these are matched: 400k groups a side).
OPERATION_COLUMNS_SHOWN = ("total_cycles", "compute_cycles", "exchange_cycles", "variable_bytes")


def compare(a: Report, b: Report, args: argparse.Namespace) -> Output:
    comparison = compare_reports(a, b)
    memory, cycles = comparison.memory, comparison.cycles
    categories = [category_column(c.label) for c in MemoryCategory]
    tables = [
        _side_by_side("memory by category", "category", categories, memory.a, memory.b),
        _side_by_side(
            "cycles by step kind",
            "kind",
            [k.poplar_name for k in StepKind] + ["total (runs)"],
            np.append(cycles.a, cycles.total_a),
            np.append(cycles.b, cycles.total_b),
        ),
        _matched(f"operations by {args.group_by}",
                 comparison.operations(args.group_by, OPERATION_COLUMNS_SHOWN),
                 OPERATION_COLUMNS_SHOWN),
    ]  # fmt: skip
    if args.variables:
        tables.append(_matched("variables", comparison.variables, ("bytes",)))
    if args.steps:
        tables.append(_matched("program steps", comparison.steps, ("cycles", "executions")))
    header = [("A", str(a.folder)), ("B", str(b.folder))]
    if memory.per_tile_diff is None:
        header.append(("Tiles", f"{a.target.num_tiles:,} in A, {b.target.num_tiles:,} in B"))
    return Output(tables, header=header, csv_table=lambda: _long_form_chunks(tables))


def _side_by_side(name: str, key: str, labels: list[str], a: np.ndarray, b: np.ndarray) -> Table:
    shown = (a != 0) | (b != 0)
    return Table(
        name,
        {
            key: [label for label, s in zip(labels, shown.tolist(), strict=True) if s],
            "a": a[shown],
            "b": b[shown],
            "diff": (b - a)[shown],
        },
    )


def _matched(name: str, matched: Matched, columns: tuple[str, ...]) -> Table:
    table: dict = {
        # decoded a chunk of rows at a time as it is written: 400k keys are never all str
        "key": TextColumn(matched.keys, "(none)"),
        "in_a": matched.in_a,
        "in_b": matched.in_b,
    }
    for column in columns:
        table[f"{column}_a"] = matched.a[column]
        table[f"{column}_b"] = matched.b[column]
        table[f"{column}_diff"] = matched.diff(column)
    return Table(name, table)


#: The columns of the long form, and the rows of one compared table made at a time.
LONG_FORM_COLUMNS = ("table", "key", "column", "a", "b", "diff")
LONG_FORM_CHUNK_ROWS = 1 << 13


def _long_form(tables: list[Table]) -> Table:
    """Every table as ``table,key,column,a,b,diff`` rows, so CSV is one table (whole: CSV
    itself is written from ``_long_form_chunks``)."""
    rows: dict[str, list] = {k: [] for k in LONG_FORM_COLUMNS}
    for chunk in _long_form_chunks(tables):
        for name, values in chunk.columns.items():
            rows[name] += values  # type: ignore[arg-type]
    return Table("comparison", rows)


def _long_form_chunks(tables: list[Table]) -> Iterator[Table]:
    """``_long_form`` a chunk of each table's rows at a time (never fewer than one chunk),
    so a 400k-row comparison is never 1.6M rows of lists at once.

    Row-major (each key's columns together), built from whole columns: the values are
    interleaved with zip() rather than read record by record (400k operations x 4 columns).
    """
    made = False
    for table in tables:
        names = list(table.columns)
        pairs = [n[:-2] for n in names if n.endswith("_a") and n != "in_a"]
        columns = pairs or ["value"]
        a = [_column(table, f"{c}_a" if pairs else "a") for c in columns]
        b = [_column(table, f"{c}_b" if pairs else "b") for c in columns]
        for lo in range(0, len(table), LONG_FORM_CHUNK_ROWS):
            hi = lo + LONG_FORM_CHUNK_ROWS
            keys = _plain(table.columns[names[0]][lo:hi])
            a_rows = [x[lo:hi] for x in a]
            b_rows = [y[lo:hi] for y in b]
            made = True
            yield Table("comparison", {
                "table": [table.name] * (len(keys) * len(columns)),
                "key": _interleave([keys] * len(columns)),
                "column": columns * len(keys),
                "a": _interleave([x.tolist() for x in a_rows]),
                "b": _interleave([y.tolist() for y in b_rows]),
                "diff": _interleave([(y - x).tolist()
                                     for x, y in zip(a_rows, b_rows, strict=True)]),
            })  # fmt: skip
    if not made:
        yield Table("comparison", {k: [] for k in LONG_FORM_COLUMNS})


def _column(table: Table, name: str) -> np.ndarray:
    values = table.columns[name]
    return values if isinstance(values, np.ndarray) else np.asarray(values)


def _plain(values: object) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[attr-defined]


def _interleave(columns: list[list]) -> list:
    """Row 0 of every column, then row 1 of every column, and so on."""
    return (
        columns[0] if len(columns) == 1 else list(chain.from_iterable(zip(*columns, strict=True)))
    )
