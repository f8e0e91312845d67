"""The Memory report's Compute Sets, Vertices and Exchanges tabs: profiler_core's answers for
the selected tiles as tables, each with a heading line."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.format import format_bytes, format_count
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.tile_contents import (
    ComputeSetsOnTiles,
    ExchangesOnTiles,
    VerticesOnTiles,
)
from profiler_core.model.kinds import MemoryCategory


def compute_sets_table(found: ComputeSetsOnTiles, units: str = "KiB") -> ColumnTable:
    columns = [
        Column("Compute set", found.names, "The compute set's name."),
        Column("Vertices", found.vertices, "Its vertices on the selected tiles.", "count"),
        Column("Tiles", found.tiles, "Selected tiles it has vertices on.", "count"),
        Column("Codelets", found.codelets, "Distinct vertex types it runs there.", "count"),
    ]
    if found.state_bytes is not None:
        columns.append(
            Column(
                "Vertex state",
                found.state_bytes,
                "Instance state of its vertices on the selected tiles.",
                "bytes",
                units=units,
            )
        )
    cycles = np.where(found.cycles >= 0, found.cycles, 0)
    columns += [
        Column(
            "Cycles (slowest tile)", cycles, "Most compute cycles on one selected tile.", "count"
        ),
        Column("Steps", found.steps, "Program steps that execute it.", "count"),
    ]
    return ColumnTable(columns)


def compute_sets_heading(found: ComputeSetsOnTiles, state_bytes: int, units: str) -> str:
    vertices = int(found.vertices.sum())
    recorded = "" if found.state_bytes is not None else " (per compute set: not in this report)"
    return (
        f"{format_count(len(found))} compute sets with {format_count(vertices)} vertices on "
        f"the selected tiles; vertex instance state there: "
        f"{format_bytes(state_bytes, True, units)}{recorded}."
    )


def vertices_table(found: VerticesOnTiles, units: str = "KiB") -> ColumnTable:
    kinds = ["supervisor" if s else "worker" for s in found.supervisor.tolist()]
    return ColumnTable(
        [
            Column("Codelet", found.names, "The vertex type."),
            Column("Vertices", found.vertices, "Vertices of it on the selected tiles.", "count"),
            Column("Tiles", found.tiles, "Selected tiles with at least one.", "count"),
            Column("Compute sets", found.compute_sets, "Compute sets using it there.", "count"),
            Column(
                "Code",
                found.code_bytes,
                "Its code on the selected tiles: paid once per tile that runs it.",
                "bytes",
                units=units,
            ),
            Column("Runs as", kinds, "A supervisor vertex, or one run by worker threads."),
        ]
    )


def vertices_heading(found: VerticesOnTiles, units: str) -> str:
    return (
        f"{format_count(int(found.vertices.sum()))} vertices of {format_count(len(found))} "
        f"codelets; their code on the selected tiles: "
        f"{format_bytes(int(found.code_bytes.sum()), True, units)}."
    )


def exchanges_table(found: ExchangesOnTiles, units: str = "KiB") -> ColumnTable:
    return ColumnTable(
        [
            Column("Step", found.step, "The program step (its id).", "count"),
            Column("Exchange", found.names, "The exchange step's name."),
            Column("Kind", found.kinds, "Internal (DoExchange) or global (GlobalExchange)."),
            Column(
                "Bytes in", found.bytes_in, "Received by the selected tiles.", "bytes", units=units
            ),
            Column(
                "Bytes out", found.bytes_out, "Sent by the selected tiles.", "bytes", units=units
            ),
            Column("Tiles", found.tiles, "Selected tiles taking part.", "count"),
        ]
    )


def exchanges_heading(found: ExchangesOnTiles, units: str) -> str:
    parts = [
        f"{label}: {format_bytes(found.memory[category], True, units)}"
        for label, category in (
            ("internal exchange code", MemoryCategory.INTERNAL_EXCHANGE_CODE),
            ("host exchange code", MemoryCategory.HOST_EXCHANGE_CODE),
            ("global exchange code", MemoryCategory.GLOBAL_EXCHANGE_CODE),
            ("exchange buffers", MemoryCategory.EXCHANGE_BUFFERS),
        )
    ]
    return (
        f"On the selected tiles — {'; '.join(parts)}. "
        f"{format_count(len(found))} exchange steps move their data:"
    )
