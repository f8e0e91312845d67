"""pva.openReport: scripts written for Graphcore's libpva (its tutorial, and the checks of the
frameworks' test utilities) run with only the import changed, and objects stay lazy."""

from __future__ import annotations

import fnmatch
import gc

import numpy as np
import pytest

from profiler_core import pva
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.pva.compilation import Tile
from profiler_core.report import open_report


@pytest.fixture
def factory_report(tmp_path, report):
    write_profile(tmp_path / "profile.pop", report[0])
    write_debug(tmp_path / "debug.cbor", report[1])
    return pva.openReport(tmp_path / "profile.pop", tmp_path / "debug.cbor"), report[0]


def test_the_libpva_tutorial_reads_tutorial4(tutorial4_report):
    report = pva.openReport(str(tutorial4_report / "profile.pop"))
    assert report.compilation.graph.numComputeSets == 4
    assert report.compilation.target.numTiles == 1472
    assert report.compilation.target.numIPUs == 1
    assert report.compilation.target.tilesPerIpu == 1472
    assert report.compilation.target.bytesPerIPU == 1472 * 638_976
    assert report.poplarVersion.string.startswith("0.1.0")
    run = open_report(tutorial4_report).execution.runs[0]
    assert sum(step.ipus[0].cycles for step in report.execution.steps) == run.total_cycles

    named = []

    class TestVisitor(pva.ProgramVisitor):
        def visitOnTileExecute(self, onTileExecute):  # noqa: N803 - as libpva scripts write it
            if len(onTileExecute.computeset.vertices) >= 1:
                named.append(onTileExecute.name)

    v = TestVisitor()
    for s in report.execution.steps:
        s.program.accept(v)
    assert named == ["m4/Conv_1/Convolve", "m4/Reduce", "m5/Conv_1/Convolve", "m5/Reduce"]
    vertices = report.compilation.computeSets[0].vertices
    assert [(x.type.name, x.count) for x in vertices] == [
        ("poplin::MatMulPartial<float,float>", 1470)
    ]


def test_the_frameworks_memory_checks_agree_with_numpy(tutorial4_report):
    report = pva.openReport(tutorial4_report)
    by_category = open_report(tutorial4_report).memory.by_category
    gaps = by_category[[MemoryCategory.ALIGNMENT_GAPS, MemoryCategory.REGION_GAPS]].sum(axis=0)
    total = sum(tile.memory.total.excludingGaps for tile in report.compilation.tiles)
    assert total == by_category.sum() - gaps.sum()
    peak = max(tile.memory.total.includingGaps for tile in report.compilation.tiles)
    assert peak == by_category.sum(axis=0).max()
    nal = by_category[MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES]
    always = sum(tile.memory.alwaysLiveBytes for tile in report.compilation.tiles)
    assert always == by_category.sum() - gaps.sum() - nal.sum()
    ipu_total = sum(t.memory.total.excludingGaps for t in report.compilation.ipus[0].tiles)
    assert ipu_total == total
    assert fnmatch.filter([cs.name for cs in report.compilation.computeSets], "*Reduce") == [
        "m4/Reduce", "m5/Reduce",
    ]  # fmt: skip


def test_global_exchange_and_interval_visitors_as_the_test_utilities_write_them(factory_report):
    report, profile = factory_report

    class IntervalVisitor(pva.ProgramVisitor):
        def __init__(self):
            self.globalExchangeCycles = 0
            self.compute = []
            super().__init__()

        def visitGlobalExchange(self, globalExchange):  # noqa: N803
            self.globalExchangeCycles += globalExchange.cyclesTo.max - globalExchange.cyclesFrom.max

        def visitOnTileExecute(self, onTileExecute):  # noqa: N803 - as libpva scripts write it
            self.compute.append((onTileExecute.cyclesFrom.max, onTileExecute.cyclesTo.max))

    v = IntervalVisitor()
    total = 0
    for step in report.execution.runs[1].steps:
        ipu = step.ipus[0]
        total += ipu.activeCycles.cyclesTo.max - ipu.activeCycles.cyclesFrom.max
        step.program.accept(v)
    p, run = profile.programs, profile.execution.runs[1]
    duration = p.step_cycles.max(axis=1)
    kinds = p.step_kind[run.step_ids]
    assert v.globalExchangeCycles == duration[run.step_ids][kinds == StepKind.GLOBAL_EXCHANGE].sum()
    assert total == p.step_cycles[run.step_ids, 0].sum()
    offset = profile.execution.runs[0].total_cycles  # run 1 starts where run 0 ended
    ote = run.step_ids[kinds == StepKind.ON_TILE_EXECUTE]
    starts = run.start_cycles[kinds == StepKind.ON_TILE_EXECUTE] + offset
    assert v.compute == list(zip(starts.tolist(), (starts + duration[ote]).tolist(), strict=True))


def test_steps_of_every_run_and_their_cycles_by_tile(factory_report):
    report, profile = factory_report
    runs = profile.execution.runs
    steps = report.execution.steps
    assert len(steps) == sum(len(r.step_ids) for r in runs)
    assert steps[-1].programStep == runs[-1].step_ids[-1]
    assert steps[len(runs[0].step_ids)].cyclesFrom.max == runs[0].total_cycles
    assert report.execution.totalCycles.total == sum(r.total_cycles for r in runs)
    p = profile.programs
    for step in report.execution.runs[1].steps:
        by_tile = step.cyclesByTile
        assert len(by_tile) == 8
        s = step.programStep
        kind = int(p.step_kind[s])
        if kind == StepKind.ON_TILE_EXECUTE:
            expected = np.zeros(8, np.int64)
            rows = p.cst_cs == p.step_cs[s]
            expected[p.cst_tile[rows]] = p.cst_cycles[rows]
        elif kind in (StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE):
            expected = p.step_cycles[s, np.arange(8) // 4]  # the factory exchanges on every tile
        else:
            expected = np.repeat(p.step_cycles[s], 4)
        assert by_tile.tolist() == expected.tolist()
        for k in range(2):
            assert step.ipus[k].cycles == p.step_cycles[s, k]
            assert (
                step.ipus[k].activeCycles.cyclesTo.max - step.cyclesFrom.max == p.step_cycles[s, k]
            )
        assert step.program.type.name == StepKind(kind).poplar_name


def test_touching_one_tile_makes_one_tile_object(tutorial4_report):
    report = pva.openReport(tutorial4_report)
    gc.collect()
    before = sum(isinstance(o, Tile) for o in gc.get_objects())
    tile = report.compilation.tiles[-1]
    assert tile.number == 1471 and tile.memory.total.includingGaps > 0
    assert len(report.compilation.tiles) == 1472
    after = sum(isinstance(o, Tile) for o in gc.get_objects())
    assert after - before == 1
    with pytest.raises(IndexError):
        report.compilation.tiles[1472]
    assert [t.number for t in report.compilation.tiles[2:5]] == [2, 3, 4]


def test_liveness_steps_and_versions(factory_report):
    report, profile = factory_report
    live = report.compilation.livenessProgramSteps
    assert [s.notAlwaysLiveMemory.bytes for s in live] == profile.liveness.step_live_bytes.tolist()
    assert (
        sum(v.bytes for v in live[3].notAlwaysLiveMemory.variables)
        == live[3].notAlwaysLiveMemory.bytes
    )
    assert live[3].program.name == profile.graph.strings[int(profile.programs.step_name[3])]
    assert (report.version.major, report.version.minor) == (1, 5)  # 1.5: lightweight blocks
    assert (report.poplarVersion.major, report.poplarVersion.minor) == (0, 1)
    assert pva.ProgramType.OnTileExecute.value == StepKind.ON_TILE_EXECUTE
