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

import contextlib
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from profiler_core.errors import ReportError
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
        elif named:
            from profiler_core.tables.build import build_tables  # not for Parquet: quicker

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
    """Run ``sql`` here while a watchdog thread stops it (DuckDB's ``interrupt``) on a
    timeout, a cancel or Ctrl+C. Ctrl+C reaches the watchdog through Python's signal wakeup
    file: DuckDB stops a query at Ctrl+C by itself only when the signal comes while it
    listens, and a query on another thread would not be stopped at all."""
    import duckdb

    why: list[str] = []
    done = threading.Event()
    with _ctrl_c_wakeup() as wakeup:

        def watch() -> None:
            started = time.monotonic()
            while not done.is_set():
                if wakeup is not None and select.select([wakeup], [], [], _POLL_SECONDS)[0]:
                    if signal.SIGINT in os.read(wakeup.fileno(), 64):
                        why.append("")  # the user's Ctrl+C
                else:
                    done.wait(_POLL_SECONDS if wakeup is None else 0)
                if timeout is not None and time.monotonic() - started > timeout:
                    why.append(f"it ran past the timeout of {timeout:g} s")
                elif cancel is not None and cancel():
                    why.append("it was cancelled")
                if why:
                    connection.interrupt()
                    return

        watchdog = threading.Thread(target=watch, name="popvision-sql-watchdog", daemon=True)
        watchdog.start()
        try:
            relation = connection.sql(sql)
            fetch = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
            return fetch()
        except (duckdb.Error, RuntimeError) as error:
            if why and why[0]:
                raise QueryError(f"the query was stopped: {why[0]}") from None
            if why or "interrupt" in str(error).lower():
                raise KeyboardInterrupt from None
            raise QueryError(f"the query failed: {error}") from None
        finally:
            done.set()
            watchdog.join()


@contextlib.contextmanager
def _ctrl_c_wakeup() -> Iterator[socket.socket | None]:
    """A socket that receives a byte for each signal while the query runs (None off the
    main thread, where signals are not ours to handle)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    previous = signal.signal(signal.SIGINT, lambda *_: None)  # the watchdog acts on it
    try:
        yield reader
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.set_wakeup_fd(previous_fd)
        reader.close()
        writer.close()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
