"""The tables as Parquet: ``OUT/<table>.parquet``, each with the schema version and the
table's name in the file's key-value metadata, so DuckDB, pandas, Spark or Dask read them as
they are and a reader can tell which schema it holds. Each file is written whole or not at
all (a temporary file renamed into place)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from profiler_core.errors import ReportError
from profiler_core.formats.atomic import atomic_write
from profiler_core.tables.schema import SCHEMA_VERSION, TABLE_KEY, TABLES, VERSION_KEY

SUFFIX = ".parquet"


def write_parquet(tables: dict[str, pa.Table], out: str | Path) -> list[Path]:
    """Write each table to ``out/<name>.parquet``; returns the files written."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportError(out, f"cannot be made: {error.strerror or error}") from None
    written = []
    for name, table in tables.items():
        path = out / f"{name}{SUFFIX}"
        atomic_write(path, lambda file, table=table: pq.write_table(table, file))
        written.append(path)
    return written


def parquet_files(folder: Path) -> dict[str, Path]:
    """The table files in ``folder`` by table name ({} when it holds none)."""
    if not folder.is_dir():
        return {}
    return {t: folder / f"{t}{SUFFIX}" for t in TABLES if (folder / f"{t}{SUFFIX}").is_file()}


def is_parquet_folder(path: str | Path) -> bool:
    return bool(parquet_files(Path(path)))


def check_version(path: Path) -> str:
    """The table name a Parquet file holds; refused when it has no schema version or one
    of another major version."""
    try:
        found = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid) as error:
        raise ReportError(path, f"is not a readable Parquet file ({error})") from None
    version = found.get(VERSION_KEY, b"").decode()
    if not version:
        raise ReportError(path, "has no popvision schema version: not written by export")
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise ReportError(
            path, f"holds tables of schema {version}; this popvision-cli reads {SCHEMA_VERSION}"
        )
    return found.get(TABLE_KEY, b"").decode()


def read_parquet_tables(folders: Sequence[Path], tables: Sequence[str]) -> dict[str, pa.Table]:
    """``tables`` read back from Parquet folders (rows of several folders one after another)."""
    made = {}
    for name in tables:
        files = [parquet_files(f).get(name) for f in folders]
        present = [f for f in files if f is not None]
        if not present:
            raise ReportError(folders[0], f"has no {name}{SUFFIX}")
        for path in present:
            check_version(path)
        parts = [pq.read_table(path, memory_map=True) for path in present]
        made[name] = pa.concat_tables(parts, promote_options="default")
    return made
