"""SQL over the tables with DuckDB, embedded: the tables the query names are made from the
reports (or read in place from a folder of Parquet) and the query runs on a connection that
can only read them.

Read-only in three ways: the text must be one SELECT (``WITH``, ``FROM t``, ``DESCRIBE``,
``SUMMARIZE`` are SELECTs to DuckDB); files outside the Parquet folders cannot be reached
(``enable_external_access`` off); and the configuration is locked, so a query cannot turn
either back on. A query that runs past its ``timeout``, or is interrupted (Ctrl+C or a
``cancel``), is stopped with ``QueryError``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from profiler_core.errors import ReportError
from profiler_core.tables.build import build_tables
from profiler_core.tables.parquet import check_version, parquet_files
from profiler_core.tables.schema import TABLES

_POLL_SECONDS = 0.05


class QueryError(ReportError):
    """A query that is not a SELECT, does not parse, fails, or was stopped."""

    def __init__(self, problem: str) -> None:
        super().__init__(None, problem)


def query(
    sql: str,
    paths: Sequence[str | Path],
    timeout: float | None = None,
    cancel: Callable[[], bool] | None = None,
) -> pa.Table:
    """The result of ``sql`` over the tables of the reports (or Parquet folders) in ``paths``."""
    import duckdb

    connection = duckdb.connect(":memory:")
    try:
        _check_select(connection, sql)
        named = _tables_named(duckdb, sql)
        folders = [Path(p) for p in paths]
        parquet = [f for f in folders if parquet_files(f)]
        if parquet and len(parquet) != len(folders):
            raise QueryError("give either folders of Parquet (from export) or reports, not both")
        if parquet:
            _views_over_parquet(connection, parquet, named)
        else:
            for name, table in build_tables(folders, named).items():
                connection.register(name, table)
        _lock(connection, parquet)
        return _run(connection, sql, timeout, cancel)
    finally:
        connection.close()


def _check_select(connection: Any, sql: str) -> None:
    import duckdb

    try:
        statements = connection.extract_statements(sql)
    except duckdb.Error as error:
        raise QueryError(f"the query does not parse: {error}") from None
    if len(statements) != 1:
        raise QueryError(f"give one query, not {len(statements)}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise QueryError(f"only a SELECT can run: the tables are read-only (this is a {kind.name})")


def _tables_named(duckdb: Any, sql: str) -> list[str]:
    """The tables the query reads (every table when DuckDB cannot tell)."""
    try:
        names = {n.lower() for n in duckdb.get_table_names(sql)}
    except Exception:
        return list(TABLES)
    return [t for t in TABLES if t in names]


def _views_over_parquet(connection: Any, folders: list[Path], named: list[str]) -> None:
    for name in named:
        files = [f for f in (parquet_files(folder).get(name) for folder in folders) if f]
        if not files:
            raise QueryError(f"{folders[0]}: no {name}.parquet to query")
        for path in files:
            check_version(path)
        listed = ", ".join(_quote(str(f.resolve())) for f in files)
        connection.execute(
            f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}], union_by_name=true)"
        )


def _lock(connection: Any, folders: list[Path]) -> None:
    if folders:
        allowed = ", ".join(_quote(f"{f.resolve()}/") for f in folders)
        connection.execute(f"SET allowed_directories=[{allowed}]")
    connection.execute("SET enable_external_access=false")
    connection.execute("SET lock_configuration=true")


def _run(
    connection: Any, sql: str, timeout: float | None, cancel: Callable[[], bool] | None
) -> pa.Table:
    """Run ``sql`` in a thread of its own, so this one can stop it (DuckDB's ``interrupt``)
    on a timeout, a cancel or Ctrl+C."""
    import duckdb

    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            relation = connection.sql(sql)
            fetch = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
            outcome["table"] = fetch()
        except duckdb.Error as error:
            outcome["error"] = error

    worker = threading.Thread(target=work, name="popvision-sql", daemon=True)
    started = time.monotonic()
    worker.start()
    why = ""
    try:
        while worker.is_alive():
            worker.join(_POLL_SECONDS)
            if timeout is not None and time.monotonic() - started > timeout:
                why = f"it ran past the timeout of {timeout:g} s"
            elif cancel is not None and cancel():
                why = "it was cancelled"
            if why and worker.is_alive():
                connection.interrupt()
                worker.join()
    except KeyboardInterrupt:
        connection.interrupt()
        worker.join()
        raise
    if why and "table" not in outcome:
        raise QueryError(f"the query was stopped: {why}")
    if "error" in outcome:
        raise QueryError(f"the query failed: {outcome['error']}")
    return outcome["table"]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
