"""``popvision-cli compare A B``: memory per category, cycles per step kind and operations of
two reports side by side with differences (B minus A); variables and steps on request."""

from __future__ import annotations

import argparse

import numpy as np

from profiler_core.analysis.compare import compare_reports
from profiler_core.analysis.matching import Matched
from profiler_core.cli.output import Output, category_column
from profiler_core.cli.tables import Table
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.report import Report


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
        _matched(f"operations by {args.group_by}", comparison.operations(args.group_by),
                 ("total_cycles", "compute_cycles", "exchange_cycles", "variable_bytes")),
    ]  # fmt: skip
    if args.variables:
        tables.append(_matched("variables", comparison.variables, ("bytes",)))
    if args.steps:
        tables.append(_matched("program steps", comparison.steps, ("cycles", "executions")))
    header = [("A", str(a.folder)), ("B", str(b.folder))]
    if memory.per_tile_diff is None:
        header.append(("Tiles", f"{a.target.num_tiles:,} in A, {b.target.num_tiles:,} in B"))
    return Output(tables, header=header, csv_table=_long_form(tables))


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
        "key": [k or "(none)" for k in matched.keys],
        "in_a": matched.in_a,
        "in_b": matched.in_b,
    }
    for column in columns:
        table[f"{column}_a"] = matched.a[column]
        table[f"{column}_b"] = matched.b[column]
        table[f"{column}_diff"] = matched.diff(column)
    return Table(name, table)


def _long_form(tables: list[Table]) -> Table:
    """Every table as ``table,key,column,a,b,diff`` rows, so CSV is one table."""
    rows: dict[str, list] = {k: [] for k in ("table", "key", "column", "a", "b", "diff")}
    for table in tables:
        names = list(table.columns)
        key = names[0]
        pairs = [n[:-2] for n in names if n.endswith("_a") and n != "in_a"]
        for record in table.records():
            for column in pairs or ["value"]:
                a = record[f"{column}_a"] if pairs else record["a"]
                b = record[f"{column}_b"] if pairs else record["b"]
                rows["table"].append(table.name)
                rows["key"].append(record[key])
                rows["column"].append(column)
                rows["a"].append(a)
                rows["b"].append(b)
                rows["diff"].append(b - a)
    return Table("comparison", rows)
