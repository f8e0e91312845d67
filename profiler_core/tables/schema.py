"""The tables over many reports: their names, columns and Arrow types, and the schema version
every Arrow table and Parquet file carries in its metadata.

Every table starts with ``report`` (the report's name: its path below the folder given),
then, for reports of a sweep, ``sweep_run`` and one column per sweep parameter, then its own
columns below. Bump ``SCHEMA_VERSION``'s minor number when columns are added, its major when
one changes meaning or goes.
"""

from __future__ import annotations

import pyarrow as pa

from profiler_core.model.kinds import MemoryCategory
from profiler_core.tables.names import TABLES

SCHEMA_VERSION = "1.0"
VERSION_KEY = b"popvision.schema_version"
TABLE_KEY = b"popvision.table"

I64, F64, STR, BOOL = pa.int64(), pa.float64(), pa.string(), pa.bool_()


def category_column(category: MemoryCategory) -> str:
    """A memory category as a column name, as ``popvision-cli memory --csv`` names it:
    ``Gaps (alignment)`` -> ``gaps_alignment``."""
    words = "".join(c if c.isalnum() else " " for c in category.label.lower()).split()
    return "_".join(words)


#: one row per report: what the Summary says, and whether it fits
REPORTS = [
    ("path", STR),  # the report folder (null for a sweep run that wrote none)
    ("program", STR),
    ("producer", STR),
    ("format_version", STR),
    ("ipu_version", STR),
    ("num_ipus", I64),
    ("tiles_per_ipu", I64),
    ("num_tiles", I64),
    ("bytes_per_tile", I64),
    ("clock_hz", F64),
    ("total_memory_bytes", I64),  # every tile's bytes, gaps included
    ("total_memory_excluding_gaps", I64),
    ("capacity_bytes", I64),  # bytes per tile x tiles
    ("fullest_tile", I64),
    ("fullest_tile_bytes", I64),
    ("tiles_over", I64),  # tiles over their memory
    ("fits", BOOL),  # no tile over and the engine did not say out of memory
    ("out_of_memory", BOOL),
    ("always_live_bytes", I64),
    ("peak_live_bytes", I64),  # always-live included
    ("peak_live_step", I64),
    ("peak_live_step_name", STR),
    ("num_runs", I64),
    ("total_cycles", I64),  # every run's cycles
    ("total_microseconds", F64),
    ("warnings", STR),  # what makes the row partial, "; "-separated ("" when whole)
    ("error", STR),  # why the report could not be read at all (null when it was)
]

#: one row per run of the execution profile (``popvision-cli execution``'s runs)
RUNS = [
    ("run", I64),
    ("name", STR),
    ("program", I64),
    ("cycles", I64),
    ("microseconds", F64),
    ("steps", I64),  # executed step instances
]

#: one row per operation per grouping (``popvision-cli operations --group-by G``; the cycles
#: of each phase are the rows grouped by ``phase``)
OPERATIONS = [
    ("group_by", STR),  # op, layer, name, framework, framework_op, context or phase
    ("operation", STR),  # the group's label ("" for steps without one)
    ("total_cycles", I64),
    ("compute_cycles", I64),
    ("exchange_cycles", I64),
    ("sync_cycles", I64),
    ("other_cycles", I64),
    ("step_executions", I64),
    ("compute_sets", I64),
    ("vertices", I64),
    ("vertex_types", I64),
    ("code_bytes", I64),  # each vertex type once per tile, code shared with others included
    ("own_code_bytes", I64),  # code no other operation uses
    ("variables", I64),
    ("variable_bytes", I64),
    ("live_at_peak_bytes", I64),  # of its variables, at the Liveness peak
    ("flops", I64),
]

#: one row per tile (``popvision-cli memory``)
TILE_MEMORY = [
    ("tile", I64),
    ("ipu", I64),
    *((category_column(c), I64) for c in MemoryCategory),
    ("total", I64),
    ("total_excluding_gaps", I64),
    ("percent_of_tile", F64),
]

#: one row per program step (``popvision-cli liveness``)
LIVENESS_STEPS = [
    ("step", I64),
    ("kind", STR),
    ("name", STR),
    ("not_always_live_bytes", I64),
    ("live_bytes", I64),
]

#: one row per program step: what it is and what it cost over every run
PROGRAM_STEPS = [
    ("step", I64),
    ("kind", STR),
    ("name", STR),
    ("compute_set", I64),  # null for steps without one
    ("program_node", I64),  # the program tree node it lowered from
    ("cycles", I64),  # one execution, as long as its slowest IPU
    ("executions", I64),  # in every run
    ("total_cycles", I64),  # cycles x executions
    ("global_exchange_bytes", I64),  # bytes over IPU-Links in one execution
]

COLUMNS: dict[str, list[tuple[str, pa.DataType]]] = {
    "reports": REPORTS,
    "runs": RUNS,
    "operations": OPERATIONS,
    "tile_memory": TILE_MEMORY,
    "liveness_steps": LIVENESS_STEPS,
    "program_steps": PROGRAM_STEPS,
}
assert tuple(COLUMNS) == TABLES  # names.py lists them for the help of the CLI


def own_schema(table: str) -> pa.Schema:
    """The table's own columns (no ``report`` or sweep columns)."""
    return pa.schema(COLUMNS[table])


def metadata(table: str) -> dict[bytes, bytes]:
    return {VERSION_KEY: SCHEMA_VERSION.encode(), TABLE_KEY: table.encode()}
