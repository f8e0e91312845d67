"""Liveness scripts in libpva's style (peak step, max not-always-live bytes per tile over
the steps as PopLiner's bottleneck search does, per IPU, lowered variables with their live
step intervals), on engine-made reports, against profiler_core's liveness analyses and
popvision-cli's JSON."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profiler_core import pva
from profiler_core.analysis.liveness_tiles import ipu_tiles, liveness_on_tiles
from profiler_core.analysis.memory import memory_table
from profiler_core.model.kinds import MemoryCategory as M
from profiler_core.report import open_report
from tests.profiler_core.cli_json import popvision_cli


def calculate_max_memory(report, step_from: int, step_to: int, tile: int):
    """PopLiner's bottleneck search, as written against libpva."""
    best, best_step, best_vars = 0, 0, []
    for i, step in enumerate(report.compilation.livenessProgramSteps):
        if i < step_from:
            continue
        if i >= step_to:
            break
        mem = step.notAlwaysLiveMemoryForTile(tile).bytes
        if best < mem:
            best, best_step = mem, i
            best_vars = step.notAlwaysLiveMemoryForTile(tile).variables
    return best, best_step, best_vars


def test_steps_and_peak_equal_the_cli(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    steps = report.compilation.livenessProgramSteps
    cli = popvision_cli("liveness", pva_report_folder)
    assert [s.notAlwaysLiveMemory.bytes for s in steps] == [
        r["not_always_live_bytes"] for r in cli["steps"]
    ]
    assert [s.program.name for s in steps] == [r["name"] for r in cli["steps"]]
    assert [s.program.type.name for s in steps] == [r["kind"] for r in cli["steps"]]
    assert [s.program._id for s in steps] == list(range(len(steps)))
    peak = max(steps, key=lambda s: s.notAlwaysLiveMemory.bytes)
    assert peak.program._id == cli["peak_step"]
    for step in steps:
        live = step.notAlwaysLiveMemory
        assert sum(v.size for v in live.variables) == live.bytes


def test_max_not_always_live_per_tile_is_the_tile_category(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    table = memory_table(open_report(pva_report_folder))
    num_steps = len(report.compilation.livenessProgramSteps)
    num_tiles = report.compilation.target.numTiles
    for tile in sorted({0, 1, num_tiles // 2, num_tiles - 1}):
        best, best_step, best_vars = calculate_max_memory(report, 0, num_steps, tile)
        # the engine keeps room for the peak of a tile's not-always-live variables
        assert best == table.by_category[M.NOT_ALWAYS_LIVE_VARIABLES, tile]
        assert best == 0 or sum(v.size for v in best_vars) == best
        expected = liveness_on_tiles(open_report(pva_report_folder), np.array([tile]))
        per_step = [
            s.notAlwaysLiveMemoryForTile(tile).bytes
            for s in report.compilation.livenessProgramSteps
        ]
        assert per_step == expected.not_always_live.tolist()
        if best:
            assert per_step[best_step] == best


def test_per_ipu_liveness_adds_up_to_the_whole_device(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    core = open_report(pva_report_folder)
    ipus = range(report.compilation.target.numIPUs)
    for step in report.compilation.livenessProgramSteps:
        per_ipu = [step.notAlwaysLiveMemoryForIpu(i).bytes for i in ipus]
        assert sum(per_ipu) == step.notAlwaysLiveMemory.bytes
    worst = max(
        report.compilation.livenessProgramSteps,
        key=lambda s: s.notAlwaysLiveMemoryForIpu(len(ipus) - 1).bytes,
    )
    table = liveness_on_tiles(core, ipu_tiles(core, len(ipus) - 1))
    assert worst.notAlwaysLiveMemoryForIpu(len(ipus) - 1).bytes == table.not_always_live.max()


def test_lowered_variables_live_intervals_rebuild_each_tiles_liveness(
    pva_report_folder: Path,
) -> None:
    """PopLiner's lowered-variable cache: each class's intervals marked in a boolean array
    per step; summing the parts on a tile live at each step gives the tile's liveness."""
    report = pva.openReport(pva_report_folder)
    compilation = report.compilation
    num_steps = len(compilation.livenessProgramSteps)
    lowered, classes = {}, {}
    for var in compilation.loweredVariables.allBriefVars:
        lowered[var.id] = (var.equivalenceClass.id, var.bytes, var.tileId)
        if var.equivalenceClass.id not in classes:
            live = np.zeros(num_steps, dtype=bool)
            for interval in var.equivalenceClass.steps:
                live[interval.start : interval.end] = True
            classes[var.equivalenceClass.id] = live
    core = open_report(pva_report_folder)
    graph = core.graph
    always = graph.var_always_live | graph.var_is_constant
    for tile in (0, compilation.target.numTiles - 1):
        on_tile = compilation.loweredVariables.forTile(tile)
        assert {v.id for v in on_tile} == {i for i, (_, _, t) in lowered.items() if t == tile}
        by_step = np.zeros(num_steps, np.int64)
        for var in on_tile:
            if not always[var.unloweredVar._id]:
                by_step += classes[var.equivalenceClass.id] * var.bytes
        expected = [
            s.notAlwaysLiveMemoryForTile(tile).bytes for s in compilation.livenessProgramSteps
        ]
        assert by_step.tolist() == expected
    # every variable's parts add up to the variable; classes follow the live ranges
    per_var: dict[int, int] = {}
    for var in compilation.loweredVariables.allBriefVars:
        per_var[var.unloweredVar._id] = per_var.get(var.unloweredVar._id, 0) + var.bytes
    mapped = np.unique(graph.region_var)
    assert [per_var[v] for v in mapped.tolist()] == graph.var_bytes[mapped].tolist()
    live = core.liveness
    for v in mapped.tolist():
        rows = np.flatnonzero(live.interval_var == v)
        part = next(x for x in compilation.loweredVariables.allBriefVars if x.unloweredVar._id == v)
        got = [(i.start, i.end) for i in part.equivalenceClass.steps]
        if always[v]:
            assert got == [(0, num_steps)]
        else:
            expected = sorted(
                (int(live.interval_first[r]), int(live.interval_last[r]) + 1) for r in rows
            )
            assert got == expected
