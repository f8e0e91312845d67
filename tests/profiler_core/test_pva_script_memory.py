"""Scripts that assert on tile memory, written as libpva users write them (framework test
utilities, PopLiner's code-size cache), run on engine-made reports; every number is checked
against profiler_core's memory table and popvision-cli's JSON."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiler_core import pva
from profiler_core.analysis.memory import memory_table
from profiler_core.model.kinds import MemoryCategory as M
from profiler_core.pva.memory import CATEGORIES, LIBPVA_CATEGORIES
from profiler_core.report import open_report
from tests.profiler_core.cli_json import popvision_cli

CLI_COLUMN = {
    "alwaysLiveVariable": "always_live_variables",
    "notAlwaysLiveVariable": "not_always_live_variables",
    "constant": "constants",
    "vertexCode": "vertex_code",
    "vertexInstanceState": "vertex_instance_state",
    "vectorListDescriptor": "vertex_descriptors_and_edge_pointers",
    "controlCode": "control_code",
    "internalExchangeCode": "internal_exchange_code",
    "hostExchangeCode": "host_exchange_code",
    "globalExchangeCode": "global_exchange_code",
    "exchangeBuffers": "exchange_buffers",
    "stack": "stack",
    "instrumentationResults": "instrumentation_results",
    "alignmentGaps": "gaps_alignment",
    "regionGaps": "gaps_memory_region_boundaries",
}


def sum_categories(report) -> dict[str, int]:
    """What such scripts do: add every category over every tile, checking each tile."""
    totals = dict.fromkeys(CATEGORIES, 0)
    for tile in report.compilation.tiles:
        memory = tile.memory
        for name in CATEGORIES:
            value = getattr(memory.category, name).total
            assert 0 <= value <= memory.total.includingGaps
            totals[name] += value
    return totals


def test_every_category_summed_over_tiles_equals_the_cli_and_the_memory_table(
    pva_report_folder: Path,
) -> None:
    report = pva.openReport(pva_report_folder)
    totals = sum_categories(report)
    rows = popvision_cli("memory", pva_report_folder)["memory_per_tile"]
    assert len(rows) == report.compilation.target.numTiles
    for name, column in CLI_COLUMN.items():
        assert totals[name] == sum(r[column] for r in rows), name
    table = memory_table(open_report(pva_report_folder))
    assert totals["variable"] == int(table.by_category[[M.ALWAYS_LIVE_VARIABLES, 1]].sum())
    assert sum(totals[n] for n in CLI_COLUMN) == int(table.total(True).sum())
    assert sum(r["total"] for r in rows) == sum(
        t.memory.total.includingGaps for t in report.compilation.tiles
    )


def test_tile_totals_always_live_bytes_and_gaps_per_tile(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    table = memory_table(open_report(pva_report_folder))
    tiles = report.compilation.tiles
    including = np.array([t.memory.total.includingGaps for t in tiles])
    excluding = np.array([t.memory.total.excludingGaps for t in tiles])
    always = np.array([t.memory.alwaysLiveBytes for t in tiles])
    gaps = table.by_category[M.ALIGNMENT_GAPS] + table.by_category[M.REGION_GAPS]
    assert including.tolist() == table.by_category.sum(axis=0).tolist()
    assert (including - excluding).tolist() == gaps.tolist()
    not_always = table.by_category[M.NOT_ALWAYS_LIVE_VARIABLES]
    assert (always + not_always).tolist() == excluding.tolist()
    # the IPU-by-IPU walk of the test utilities sees the same tiles
    per_ipu = [
        sum(t.memory.total.excludingGaps for t in ipu.tiles) for ipu in report.compilation.ipus
    ]
    assert per_ipu == table.per_ipu(False).sum(axis=1).tolist()


def test_always_live_variables_of_a_tile_add_up_to_its_always_live_bytes(
    pva_report_folder: Path,
) -> None:
    report = pva.openReport(pva_report_folder)
    compilation = report.compilation
    for tile in (0, 1, compilation.target.numTiles - 1):
        listed = compilation.alwaysLiveVariablesForTile(tile)
        names = {v.name for v in listed}
        assert {"vertexCode", "controlCode", "internalExchangeCode", "hostExchangeCode"} <= names
        assert sum(v.size for v in listed) == compilation.tiles[tile].memory.alwaysLiveBytes
    everything = sum(v.size for v in compilation.alwaysLiveVariables)
    assert everything == sum(t.memory.alwaysLiveBytes for t in compilation.tiles)


def test_vertex_code_bytes_per_type_per_tile_like_popliner(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    num_tiles = report.compilation.target.numTiles
    code_by_type: dict[str, np.ndarray] = {}
    for i, tile in enumerate(report.compilation.tiles):
        for vertex in tile.memory.vertices:
            code_by_type.setdefault(vertex.type.name, np.zeros(num_tiles, np.int64))
            code_by_type[vertex.type.name][i] = vertex.codeBytes
    # independent: from the report's vertex-count rows with numpy
    g = open_report(pva_report_folder).graph
    expected: dict[str, np.ndarray] = {}
    for t, name in enumerate(g.strings.take(g.vt_name)):
        on = np.zeros(num_tiles, np.int64)
        on[g.vc_tile[(g.vc_type == t) & (g.vc_count > 0)]] = g.vt_code_bytes[t]
        if on.any():
            expected[name] = on
    assert code_by_type.keys() == expected.keys()
    for name in expected:
        assert code_by_type[name].tolist() == expected[name].tolist()
    # each tile's vertex code category is its vertex types' code
    vertex_code = sum(code_by_type.values())
    assert vertex_code.tolist() == [
        t.memory.category.vertexCode.total for t in report.compilation.tiles
    ]


def test_program_code_per_tile_adds_up_to_the_code_categories(pva_report_folder: Path) -> None:
    """The test utilities' per-layer sums: codeBytesByTile of DoExchange programs and
    controlCodeByTile of every program against the tile categories."""
    report = pva.openReport(pva_report_folder)
    programs = report.compilation.programs
    zeros = np.zeros(report.compilation.target.numTiles, np.int64)
    exchange = {pva.Program.Type.DoExchange: zeros, pva.Program.Type.GlobalExchange: zeros}
    control = zeros
    for program in programs:
        if program.type in exchange:
            exchange[program.type] = exchange[program.type] + program.codeBytesByTile
        control = control + program.controlCodeByTile
    tiles = report.compilation.tiles
    internal = [t.memory.category.internalExchangeCode.total for t in tiles]
    global_ = [t.memory.category.globalExchangeCode.total for t in tiles]
    assert exchange[pva.Program.Type.DoExchange].tolist() == internal
    assert exchange[pva.Program.Type.GlobalExchange].tolist() == global_
    assert any(internal) or any(global_)  # each report has exchanges of one kind or both
    assert control.tolist() == [t.memory.category.controlCode.total for t in tiles]


def test_category_names_and_unmodelled_categories() -> None:
    assert set(LIBPVA_CATEGORIES) >= {
        "vertexCode", "internalExchangeCode", "globalExchangeCode", "hostExchangeCode",
        "controlCode", "constant", "vertexInstanceState", "vectorListDescriptor", "stack",
        "variable",
    }  # fmt: skip
    covered = [c for names in CATEGORIES.values() for c in names]
    # every category of ours is under exactly one name, apart from the two in "variable"
    assert sorted(covered) == sorted([*M, M.ALWAYS_LIVE_VARIABLES, M.NOT_ALWAYS_LIVE_VARIABLES])


def test_a_libpva_category_we_do_not_model_names_the_nearest(tutorial4_report: Path) -> None:
    category = pva.openReport(tutorial4_report).compilation.tiles[0].memory.category
    with pytest.raises(AttributeError, match="vertexFieldData is libpva's .* vectorListDescriptor"):
        category.vertexFieldData  # noqa: B018
    with pytest.raises(AttributeError, match="interleaved .* total"):
        category.vertexCode.interleaved  # noqa: B018
    with pytest.raises(AttributeError, match="nearest covered attribute is vertexCode"):
        category.vertxCode  # noqa: B018
