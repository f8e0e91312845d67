"""Tables over many reports, one versioned schema (``schema.py``): ``reports``, ``runs``,
``operations``, ``tile_memory``, ``liveness_steps`` and ``program_steps``, each with a
``report`` column (and a sweep's values as columns), as Arrow tables built from the readers'
numpy columns (``build.py``, ``per_report.py``); queried with DuckDB in this process, on a
connection that can only read them (``sql.py``); written as Parquet (``parquet.py``).

    from profiler_core.tables import report_tables, query, write_parquet
    tables = report_tables(["sweeps/t6"])           # {name: pyarrow.Table}
    tables["reports"].column("peak_live_bytes")
    query("SELECT rows, max(total_cycles) FROM reports GROUP BY rows", ["sweeps/t6"])
    write_parquet(tables, "t6-parquet")

Its names are imported when first used, so ``import profiler_core.tables.names`` (what the
CLI needs for its help) does not import pyarrow.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from profiler_core.tables.names import TABLES

_LAZY = {
    "report_tables": ("profiler_core.tables.build", "build_tables"),
    "query": ("profiler_core.tables.sql", "query"),
    "QueryError": ("profiler_core.tables.sql", "QueryError"),
    "write_parquet": ("profiler_core.tables.parquet", "write_parquet"),
    "read_parquet_tables": ("profiler_core.tables.parquet", "read_parquet_tables"),
    "find_sources": ("profiler_core.tables.sources", "find_sources"),
    "SCHEMA_VERSION": ("profiler_core.tables.schema", "SCHEMA_VERSION"),
}

__all__ = ["TABLES", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'profiler_core.tables' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    return getattr(import_module(module), attribute)
