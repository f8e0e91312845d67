"""Tables over many reports, one versioned schema (``schema.py``): ``reports``, ``runs``,
``operations``, ``tile_memory``, ``liveness_steps`` and ``program_steps``, each with a
``report`` column (and a sweep's values as columns), as Arrow tables built from the readers'
numpy columns; queried with DuckDB in this process (``query.py``) and written as Parquet
(``parquet.py``).

    from profiler_core.tables import report_tables, query
    tables = report_tables(["sweeps/t6"])          # {name: pyarrow.Table}
    tables["reports"].to_pydict()["peak_live_bytes"]
    query("SELECT report, total_cycles FROM reports ORDER BY total_cycles", ["sweeps/t6"])
"""

from profiler_core.tables.build import build_tables as report_tables
from profiler_core.tables.schema import SCHEMA_VERSION, TABLES
from profiler_core.tables.sources import ReportSource, Sources, find_sources

__all__ = ["SCHEMA_VERSION", "TABLES", "ReportSource", "Sources", "find_sources", "report_tables"]
