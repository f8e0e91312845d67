"""Many reports into the tables: each report opened once, every table asked for made from it,
then each table's parts joined with ``report`` and the sweep's columns beside them.

A report that cannot be opened is a ``reports`` row whose ``error`` says why; a part that
cannot be made (a damaged section) is left out and named in the row's ``warnings``; the
other reports load as if nothing happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from profiler_core.errors import LoadCancelledError, ReportError
from profiler_core.report import open_report
from profiler_core.tables.per_report import PARTS, StringTables
from profiler_core.tables.report_row import open_error, report_row
from profiler_core.tables.schema import COLUMNS, TABLES, metadata, own_schema
from profiler_core.tables.sources import ReportSource, Sources, find_sources

Progress = Callable[[int, int, str], None]
"""``progress(done, total, report)`` after each report."""


def read_report(
    source: ReportSource, tables: Sequence[str]
) -> tuple[dict[str, Any], dict[str, pa.Table]]:
    """``source``'s row of ``reports`` and its part of each other table in ``tables``."""
    parts: dict[str, pa.Table] = {}
    if source.path is None:
        return report_row(source, None), parts
    try:
        report = open_report(source.path, on_demand=True)
    except Exception as error:  # a damaged folder is a row saying so, whatever went wrong
        return report_row(source, None, open_error(error)), parts
    problems: list[str] = []
    try:
        strings = StringTables()
        for name in tables:
            if name == "reports":
                continue
            try:
                parts[name] = PARTS[name](report, strings)
            except Exception as error:
                problems.append(f"no {name}: {open_error(error)}")
        if "reports" not in tables:
            return {}, parts
        try:
            row = report_row(source, report)
        except Exception as error:
            return report_row(source, None, open_error(error)), parts
        known = row.get("warnings") or ""
        extra = [p for p in problems if p.split(": ", 1)[1] not in known]
        row["warnings"] = "; ".join(w for w in [known, *extra] if w)
        return row, parts
    finally:
        report.close()


def iter_reports(
    sources: Sources, tables: Sequence[str], cancel: Callable[[], bool] | None = None
) -> Iterator[tuple[int, dict[str, Any], dict[str, pa.Table]]]:
    """``(index, row, parts)`` of each source in turn; ``cancel()`` stops between reports
    with ``LoadCancelledError``."""
    for index, source in enumerate(sources.reports):
        if cancel is not None and cancel():
            raise LoadCancelledError(source.path, "reading the reports was cancelled")
        row, parts = read_report(source, tables)
        yield index, row, parts


def build_tables(
    paths: Sequence[str | Path],
    tables: Sequence[str] | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[str, pa.Table]:
    """The ``tables`` over the reports in ``paths`` (reports, sweeps, folders of reports)."""
    tables = table_names(tables)
    sources = find_sources(paths)
    rows: list[dict[str, Any]] = []
    pieces: dict[str, list[tuple[int, pa.Table]]] = {t: [] for t in tables if t != "reports"}
    total = len(sources.reports)
    for index, row, parts in iter_reports(sources, tables, cancel):
        rows.append(row)
        for name, part in parts.items():
            pieces[name].append((index, part))
        if progress is not None:
            progress(index + 1, total, sources.reports[index].name)
    made = {}
    for name in tables:
        if name == "reports":
            made[name] = reports_table(sources, rows, np.arange(len(rows)))
        else:
            made[name] = joined(name, sources, pieces[name])
    return made


def reports_table(sources: Sources, rows: list[dict[str, Any]], indices: np.ndarray) -> pa.Table:
    """The ``reports`` rows of the sources at ``indices`` (in that order)."""
    own = pa.Table.from_pylist(rows, schema=own_schema("reports"))
    return _with_report_columns("reports", own, sources, np.asarray(indices, dtype=np.int64))


def joined(name: str, sources: Sources, pieces: list[tuple[int, pa.Table]]) -> pa.Table:
    """Parts of table ``name`` (each the part of one source) as one table."""
    schema = own_schema(name)
    if not pieces:
        return _with_report_columns(name, schema.empty_table(), sources, np.zeros(0, np.int64))
    own = pa.concat_tables([part for _, part in pieces])
    owners = np.repeat(
        np.array([index for index, _ in pieces], dtype=np.int64),
        np.array([part.num_rows for _, part in pieces], dtype=np.int64),
    )
    return _with_report_columns(name, own, sources, owners)


def _with_report_columns(
    name: str, own: pa.Table, sources: Sources, owners: np.ndarray
) -> pa.Table:
    """``own`` with ``report`` first, then ``sweep_run`` and the sweep's values (each row
    its report's, by Arrow's take over the per-report columns)."""
    owner = pa.array(owners, type=pa.int64())
    columns = {"report": pa.array([s.name for s in sources.reports], type=pa.string())}
    if sources.sweeps:
        columns["sweep_run"] = pa.array([s.sweep_run for s in sources.reports], pa.string())
        for parameter, kind in sources.parameter_types().items():
            texts = [s.values.get(parameter) for s in sources.reports]
            columns[parameter_column(parameter)] = _typed(texts, kind)
    arrays = [pc.take(column, owner) for column in columns.values()]
    table = pa.Table.from_arrays(arrays + own.columns, names=list(columns) + own.column_names)
    return table.replace_schema_metadata(metadata(name))


def parameter_column(parameter: str) -> str:
    """A sweep parameter's column name in every table: its own, unless a table has a column
    of that name (``sweep_`` before it then)."""
    taken = {"report", "sweep_run"} | {c for columns in COLUMNS.values() for c, _ in columns}
    return parameter if parameter not in taken else f"sweep_{parameter}"


def _typed(texts: list[str | None], kind: str) -> pa.Array:
    array = pa.array(texts, type=pa.string())
    if kind == "int":
        return array.cast(pa.int64())
    if kind == "float":
        return array.cast(pa.float64())
    return array


def table_names(tables: Sequence[str] | None) -> tuple[str, ...]:
    """``tables`` checked (all of them for None)."""
    if tables is None:
        return TABLES
    for table in tables:
        if table not in TABLES:
            raise ReportError(None, f"no table {table!r}; the tables are {', '.join(TABLES)}")
    return tuple(tables)
