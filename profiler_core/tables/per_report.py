"""One report's part of each table, made from the analyses every command uses (memory,
liveness, program steps, runs, operations), column by column: numpy arrays wrapped as Arrow
arrays, names taken from the report's string table by id."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from profiler_core.analysis.checks import checked_programs, selected_runs
from profiler_core.analysis.execution import run_totals
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.operations import OPERATION_GROUPINGS, operations_table
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.model.strings import Strings
from profiler_core.tables.arrow_columns import (
    floats,
    ints,
    names_of,
    string_table,
    take_strings,
    text_column,
)
from profiler_core.tables.schema import COLUMNS, category_column, own_schema

STEP_KIND_NAMES = [k.poplar_name for k in StepKind]
_OPERATION_NUMBERS = [name for name, _ in COLUMNS["operations"][2:]]


class StringTables:
    """A report's string tables as Arrow arrays, each made once however many columns use it."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[Strings, pa.Array]] = {}

    def of(self, strings: Strings) -> pa.Array:
        made = self._made.get(id(strings))
        if made is None or made[0] is not strings:
            made = (strings, string_table(strings))
            self._made[id(strings)] = made
        return made[1]


def runs_part(report: Any, strings: StringTables) -> pa.Table:
    totals = run_totals(report)
    return _table(
        "runs",
        {
            "run": ints(np.arange(len(totals))),
            "name": pa.array(totals.names, type=pa.string()),  # one per run: a few
            "program": ints(totals.program),
            "cycles": ints(totals.cycles),
            "microseconds": floats(np.round(totals.seconds * 1e6, 3)),
            "steps": ints(totals.steps),
        },
    )


def tile_memory_part(report: Any, strings: StringTables) -> pa.Table:
    table = memory_table(report)
    tiles = np.arange(table.num_tiles)
    columns: dict[str, pa.Array] = {"tile": ints(tiles), "ipu": ints(tiles // table.tiles_per_ipu)}
    for category in MemoryCategory:
        columns[category_column(category)] = ints(table.by_category[int(category)])
    total = table.total(True)
    columns["total"] = ints(total)
    columns["total_excluding_gaps"] = ints(table.total(False))
    columns["percent_of_tile"] = floats(np.round(100.0 * total / table.bytes_per_tile, 3))
    return _table("tile_memory", columns)


def liveness_steps_part(report: Any, strings: StringTables) -> pa.Table:
    table = liveness_table(report)
    return _table(
        "liveness_steps",
        {
            "step": ints(np.arange(table.num_steps)),
            "kind": names_of(STEP_KIND_NAMES, table.step_kind),
            "name": take_strings(strings.of(report.strings), table.step_name),
            "not_always_live_bytes": ints(table.live_bytes(False)),
            "live_bytes": ints(table.live_bytes(True)),
        },
    )


def program_steps_part(report: Any, strings: StringTables) -> pa.Table:
    programs = checked_programs(report)
    executions = np.zeros(programs.num_steps, dtype=np.int64)
    for run in selected_runs(report, None):
        executions += np.bincount(run.step_ids, minlength=programs.num_steps)
    cycles = programs.step_cycles.max(axis=1) if programs.num_steps else np.zeros(0, dtype=np.int64)
    return _table(
        "program_steps",
        {
            "step": ints(np.arange(programs.num_steps)),
            "kind": names_of(STEP_KIND_NAMES, programs.step_kind),
            "name": take_strings(strings.of(report.strings), programs.step_name),
            "compute_set": ints(programs.step_cs, null_below=0),
            "program_node": ints(programs.step_node, null_below=0),
            "cycles": ints(cycles),
            "executions": ints(executions),
            "total_cycles": ints(cycles.astype(np.int64) * executions),
            "global_exchange_bytes": ints(programs.step_global_bytes),
        },
    )


def operations_part(report: Any, strings: StringTables) -> pa.Table:
    """Every grouping's operations, one after the other (a report without debug.cbor has
    none: its steps belong to no operation)."""
    debug = report.debug
    if debug is None:
        return own_schema("operations").empty_table()
    pieces = []
    for group_by in OPERATION_GROUPINGS:
        table = operations_table(report, group_by, None, debug=debug)
        columns: dict[str, pa.Array] = {
            "group_by": pa.array(np.full(len(table), group_by)).cast(pa.string()),
            "operation": text_column(table.label_column),
        }
        for name in _OPERATION_NUMBERS:
            columns[name] = ints(getattr(table, name))
        pieces.append(_table("operations", columns))
    return pa.concat_tables(pieces)


PARTS: dict[str, Callable[[Any, StringTables], pa.Table]] = {
    "runs": runs_part,
    "operations": operations_part,
    "tile_memory": tile_memory_part,
    "liveness_steps": liveness_steps_part,
    "program_steps": program_steps_part,
}


def _table(name: str, columns: dict[str, pa.Array]) -> pa.Table:
    return pa.Table.from_pydict(columns, schema=own_schema(name))
