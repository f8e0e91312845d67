"""The columns of each profile.pop section, their dtypes and tables, and the checks that keep
a section self-consistent. The writer and the reader share them, so what one writes the
other accepts.

Checks stay inside a section (equal table lengths, in-range row references, offsets), so a
section decodes without touching the others.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.model.profile import ProgramSteps

I32, I64, U8, BOOL = np.dtype("<i4"), np.dtype("<i8"), np.dtype("|u1"), np.dtype("|b1")


@dataclass(frozen=True)
class Column:
    """One numpy column of a model dataclass, named as the dataclass field."""

    name: str
    dtype: np.dtype
    table: str  # columns of one table have equal lengths along ``axis``
    ndim: int = 1
    axis: int = 0
    ref: str | None = None  # values are row numbers of this table
    nullable: bool = False  # -1 means "none"

    @property
    def field(self) -> str:
        """The schema's field name: ``var_shape_offsets`` -> ``varShapeOffsets``."""
        head, *rest = self.name.split("_")
        return head + "".join(word.capitalize() for word in rest)


GRAPH_COLUMNS: tuple[Column, ...] = (
    Column("var_name", I32, "variables", ref="strings"),
    Column("var_type", U8, "variables"),
    Column("var_elements", I64, "variables"),
    Column("var_bytes", I64, "variables"),
    Column("var_is_constant", BOOL, "variables"),
    Column("var_always_live", BOOL, "variables"),
    Column("var_debug", I32, "variables"),
    Column("var_shape_offsets", I64, "variables + 1"),
    Column("var_shape_dims", I64, "shape dims"),
    Column("region_var", I32, "regions", ref="variables"),
    Column("region_tile", I32, "regions"),
    Column("region_start", I64, "regions"),
    Column("region_elements", I64, "regions"),
    Column("cs_name", I32, "compute sets", ref="strings"),
    Column("cs_debug", I32, "compute sets"),
    Column("vt_name", I32, "vertex types", ref="strings"),
    Column("vt_code_bytes", I32, "vertex types"),
    Column("vt_supervisor", BOOL, "vertex types"),
    Column("vc_cs", I32, "vertex counts", ref="compute sets"),
    Column("vc_type", I32, "vertex counts", ref="vertex types"),
    Column("vc_tile", I32, "vertex counts"),
    Column("vc_count", I32, "vertex counts"),
    Column("vc_flops", I64, "vertex counts"),
)

GRAPH_OPTIONAL_COLUMNS: tuple[Column, ...] = (
    # added in 1.1: absent from 1.0 files, which read as None
    Column("vt_state_bytes", I64, "vertex types"),
    # added after 1.4 (additive, same format version): absent from older files, read as None
    Column("vc_debug", I32, "vertex counts"),
)


def columns_of(table: str) -> list[Column]:
    return [c for c in (*GRAPH_COLUMNS, *PROGRAM_COLUMNS) if c.table == table]


def check_optional(
    columns: dict[str, np.ndarray], extra: dict[str, np.ndarray], spec: tuple[Column, ...]
) -> None:
    """An optional column present must be as long as its table's required columns."""
    for column in spec:
        if column.name not in extra:
            continue
        same_table = next((c.name for c in columns_of(column.table) if c.name in columns), None)
        if same_table is None:  # a table of another section: checked where both are read
            continue
        found, expected = len(extra[column.name]), len(columns[same_table])
        if found != expected:
            raise ReportError(
                None, f"{column.name} has {found} rows but {column.table} has {expected}"
            )


MEMORY_COLUMNS: tuple[Column, ...] = (
    Column("by_category", I64, "tiles", ndim=2, axis=1),
    Column("interleaved", I64, "tiles"),
)

PROGRAM_COLUMNS: tuple[Column, ...] = (
    Column("node_kind", U8, "nodes"),
    Column("node_name", I32, "nodes"),
    Column("node_parent", I32, "nodes", ref="nodes", nullable=True),
    Column("node_step", I32, "nodes", ref="steps", nullable=True),
    Column("node_count", I64, "nodes"),
    Column("node_debug", I32, "nodes"),
    Column("node_function", I32, "nodes"),
    Column("roots", I32, "programs", ref="nodes"),
    Column("step_kind", U8, "steps"),
    Column("step_name", I32, "steps"),
    Column("step_cs", I32, "steps"),
    Column("step_debug", I32, "steps"),
    Column("step_node", I32, "steps", ref="nodes", nullable=True),
    Column("step_cycles", I64, "steps", ndim=2),
    Column("step_global_bytes", I64, "steps"),
    Column("exch_step", I32, "exchanges", ref="steps"),
    Column("exch_tile", I32, "exchanges"),
    Column("exch_bytes_in", I64, "exchanges"),
    Column("exch_bytes_out", I64, "exchanges"),
    Column("cst_cs", I32, "compute set tiles"),
    Column("cst_tile", I32, "compute set tiles"),
    Column("cst_cycles", I32, "compute set tiles"),
)

PROGRAM_OPTIONAL_COLUMNS: tuple[Column, ...] = (
    # added after 1.1 (additive, same format version): absent from older files, read as None
    Column("cs_busy_cycles", I64, "compute sets"),  # checked against the graph's by analyses
)

_STEPS = {f.name for f in fields(ProgramSteps)}
#: The program tree and its steps' kinds and names (``ProgramSteps``), and the steps' costs
#: (the rest of ``ProgramData``): checked apart since 1.4, so the window checks the costs (90%
#: of a big section's bytes) after its first paint.
PROGRAM_STEP_COLUMNS = tuple(c for c in PROGRAM_COLUMNS if c.name in _STEPS)
PROGRAM_COST_COLUMNS = tuple(c for c in PROGRAM_COLUMNS if c.name not in _STEPS)

LIVENESS_COLUMNS: tuple[Column, ...] = (
    Column("step_live_bytes", I64, "steps"),
    Column("interval_var", I32, "intervals"),
    Column("interval_first", I32, "intervals"),
    Column("interval_last", I32, "intervals"),
)

RUN_COLUMNS: tuple[Column, ...] = (
    Column("step_ids", I32, "instances"),
    Column("start_cycles", I64, "instances"),
)

STRING_OFFSETS = Column("offsets", I64, "strings + 1")


def check_tables(
    columns: dict[str, np.ndarray], spec: tuple[Column, ...], lengths: dict[str, int]
) -> dict[str, int]:
    """Check that columns of one table agree in length and that references are in range.

    ``lengths`` gives tables known from elsewhere (the string table); the returned dict adds
    every table of ``spec``. Raises ``ReportError`` without a path.
    """
    lengths = dict(lengths)
    first_of: dict[str, str] = {}
    for column in spec:
        rows = columns[column.name].shape[column.axis]
        if column.table not in lengths:
            lengths[column.table], first_of[column.table] = rows, column.name
        elif lengths[column.table] != rows:
            other = first_of.get(column.table, f"the {column.table} table")
            raise ReportError(
                None,
                f"column '{column.name}' has {rows} rows but '{other}' has "
                f"{lengths[column.table]}: columns of one table must have equal lengths",
            )
    for column in spec:
        if column.ref is not None:
            _check_rows(columns[column.name], column, lengths[column.ref])
    return lengths


def check_offsets(offsets: np.ndarray, name: str, total: int) -> None:
    """``offsets`` must start at 0, never decrease and end at ``total`` (a blob's length)."""
    if len(offsets) == 0:
        raise ReportError(None, f"offsets '{name}' are empty; they need at least one entry")
    if offsets[0] != 0 or offsets[-1] != total:
        raise ReportError(
            None,
            f"offsets '{name}' run from {offsets[0]} to {offsets[-1]} but must run from 0 "
            f"to {total}",
        )
    if len(offsets) > 1 and (np.diff(offsets) < 0).any():
        raise ReportError(None, f"offsets '{name}' decrease somewhere; they must never")


def check_graph(columns: dict[str, np.ndarray], num_strings: int) -> None:
    lengths = check_tables(columns, GRAPH_COLUMNS, {"strings": num_strings})
    if lengths["variables + 1"] != lengths["variables"] + 1:
        raise ReportError(
            None,
            f"column 'var_shape_offsets' has {lengths['variables + 1']} rows but must have "
            f"one more than the {lengths['variables']} variables",
        )
    check_offsets(columns["var_shape_offsets"], "var_shape_offsets", lengths["shape dims"])


def check_programs(columns: dict[str, np.ndarray]) -> None:
    check_tables(columns, PROGRAM_COLUMNS, {})
    parents = columns["node_parent"]
    # Depth-first order: a node's parent precedes it, so the tree cannot hold a cycle.
    if len(parents) and (parents >= np.arange(len(parents))).any():
        bad = int(np.argmax(parents >= np.arange(len(parents))))
        raise ReportError(
            None, f"program node {bad} has parent {parents[bad]}, which does not precede it"
        )


def _check_rows(values: np.ndarray, column: Column, rows: int) -> None:
    if values.size == 0:
        return
    low, high = int(values.min()), int(values.max())
    lowest = -1 if column.nullable else 0
    if low < lowest or high >= rows:
        bad = low if low < lowest else high
        raise ReportError(
            None,
            f"column '{column.name}' refers to row {bad} of the {column.ref} table, "
            f"which has {rows} rows",
        )
