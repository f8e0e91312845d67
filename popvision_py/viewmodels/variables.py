"""The Memory report's Variables tab: the variables on the selected tiles as a table."""

from __future__ import annotations

from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.memory import VariablesOnTiles


def variables_table(found: VariablesOnTiles, units: str = "KiB") -> ColumnTable:
    """Name, debug context, sizes and flags of each variable on the selection, largest first."""
    columns = [
        Column("Variable", found.names, "The variable's name in the graph."),
        Column("Debug context", found.debug_names, "The debug context that created it."),
        Column("Layer", found.layers, "The framework layer, when the program named one."),
        Column("Op", found.ops, "The operation (PopLibs call) that created it."),
        Column("Type", found.types, "Element type."),
        Column("Shape", found.shapes, "Dimensions of the whole variable."),
        Column(
            "On selected tiles",
            found.bytes,
            "Bytes of it on the selected tiles.",
            "bytes",
            units=units,
        ),
        Column(
            "Total size", found.total_bytes, "Bytes of the whole variable.", "bytes", units=units
        ),
        Column("Tiles", found.tiles, "How many of the selected tiles hold part of it.", "count"),
        Column(
            "Always live",
            found.always_live,
            "Live for the whole program; otherwise it shares memory by liveness.",
            "flag",
        ),
        Column("Constant", found.is_constant, "A constant tensor.", "flag"),
    ]
    return ColumnTable(columns, matcher=found.matching)
