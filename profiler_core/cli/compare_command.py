"""``popvision-cli compare A B``: memory per category, cycles per step kind and operations of
two reports side by side with differences (B minus A); variables and steps on request."""

from __future__ import annotations

import argparse
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
    return Output(tables, header=header, csv_table=lambda: _long_form(tables))


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


def _long_form(tables: list[Table]) -> Table:
    """Every table as ``table,key,column,a,b,diff`` rows, so CSV is one table.

    Row-major (each key's columns together), built from whole columns: the values are
    interleaved with zip() rather than read record by record (400k operations x 4 columns).
    """
    rows: dict[str, list] = {k: [] for k in ("table", "key", "column", "a", "b", "diff")}
    for table in tables:
        names = list(table.columns)
        pairs = [n[:-2] for n in names if n.endswith("_a") and n != "in_a"]
        columns = pairs or ["value"]
        a = [_column(table, f"{c}_a" if pairs else "a") for c in columns]
        b = [_column(table, f"{c}_b" if pairs else "b") for c in columns]
        keys = _plain(table.columns[names[0]])
        rows["table"] += [table.name] * (len(keys) * len(columns))
        rows["key"] += _interleave([keys] * len(columns))
        rows["column"] += columns * len(keys)
        rows["a"] += _interleave([x.tolist() for x in a])
        rows["b"] += _interleave([x.tolist() for x in b])
        rows["diff"] += _interleave([(y - x).tolist() for x, y in zip(a, b, strict=True)])
    return Table("comparison", rows)


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
