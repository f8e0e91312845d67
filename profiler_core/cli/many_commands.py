"""The commands over many reports: ``runs`` (one row per report: does it fit, how fast, how
much memory), ``sql`` (DuckDB over the tables) and ``export --parquet`` (the tables as
Parquet files). Each takes report folders, sweeps and folders of reports alike."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table

# pyarrow and DuckDB are imported by the commands that use them: every other command of
# popvision-cli starts without them.

OVERVIEW = ("total_cycles", "peak_live_bytes", "fullest_tile_bytes", "fits", "tiles_over")


def runs_command(args: argparse.Namespace) -> Output:
    from profiler_core.tables.build import build_tables, parameter_column
    from profiler_core.tables.sources import find_sources

    sources = find_sources(args.PATHS)
    reports = build_tables(args.PATHS, ["reports"])["reports"]
    names = ["report", *(parameter_column(p) for p in sources.parameters)]
    shown = reports.select([*names, *OVERVIEW, "warnings", "error"])
    out = Output([arrow_table("runs", shown)])
    path, error = reports.column("path").to_pylist(), reports.column("error").to_pylist()
    report = reports.column("report").to_pylist()
    # A report that could not be read makes the output partial; a sweep run that failed
    # (no path) is a result, said in its row.
    out.warnings = [f"{r}: {e}" for r, p, e in zip(report, path, error, strict=True) if p and e]
    return out


def sql_command(args: argparse.Namespace) -> Output:
    from profiler_core.tables.sql import query

    result = query(args.QUERY, args.PATHS, timeout=args.timeout)
    return Output([arrow_table("query", result)])


def export_command(args: argparse.Namespace) -> Output:
    from profiler_core.tables.build import build_tables, table_names
    from profiler_core.tables.parquet import write_parquet
    from profiler_core.tables.schema import SCHEMA_VERSION

    tables = table_names(args.tables.split(",") if args.tables else None)
    made = build_tables(args.PATHS, tables)
    files = write_parquet(made, args.parquet)
    shown = Table(
        f"Parquet tables (schema {SCHEMA_VERSION})",
        {
            "table": list(made),
            "rows": [t.num_rows for t in made.values()],
            "columns": [t.num_columns for t in made.values()],
            "file": [str(f) for f in files],
        },
    )
    reports = made.get("reports")
    out = Output([shown])
    if reports is not None:
        path, error = reports.column("path").to_pylist(), reports.column("error").to_pylist()
        names = reports.column("report").to_pylist()
        out.warnings = [f"{r}: {e}" for r, p, e in zip(names, path, error, strict=True) if p and e]
    return out


def arrow_table(name: str, table: Any) -> Table:
    """An Arrow table as a CLI table: numbers without nulls as numpy columns, the rest as
    lists (a query's sums are decimals to DuckDB: whole ones become integers)."""
    import pyarrow as pa

    columns: dict[str, Any] = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        kind = field.type
        if pa.types.is_decimal(kind) and kind.scale == 0:
            try:
                column = column.cast(pa.int64())
                kind = pa.int64()
            except pa.ArrowInvalid:  # beyond int64: kept as text, exactly
                column = column.cast(pa.string())
        numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
        if (numeric or pa.types.is_boolean(kind)) and column.null_count == 0:
            columns[field.name] = np.asarray(column.to_numpy())
        elif pa.types.is_decimal(kind):
            columns[field.name] = [None if v is None else float(v) for v in column.to_pylist()]
        else:
            columns[field.name] = [_plain(v) for v in column.to_pylist()]
    return Table(name, columns)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    return str(value)  # dates, times, decimals: their text
