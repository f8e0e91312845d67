"""Report-level pva attributes (versions, instrumentation, target, graph, runs, printing)
and what happens when a script asks for a libpva attribute we do not model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from profiler_core import pva
from profiler_core.pva import lazy
from profiler_core.pva.report import InstrumentationSettings
from profiler_core.report import open_report


def test_versions_and_instrumentation_of_an_engine_report(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    header = open_report(tutorial4_report).header
    version = report.poplarVersion
    numbers = [int(n) for n in header.producer_version.split(".")[:3]]
    assert [version.major, version.minor, version.point] == numbers
    assert version.string == f"{header.producer_version} ({header.producer})"
    assert version.packageHash == header.producer
    assert (report.version.major, report.version.minor) == (
        header.format_major,
        header.format_minor,
    )
    assert report.version.point == 0 and report.version.isUnstableFormat is False
    # autoReport.all asks for an execution profile, which instruments the program per tile
    settings = report.instrumentationSettings
    assert settings.computeInstrumentationLevel is pva.InstrumentationLevel.Tile
    assert settings.externalExchangeInstrumentationLevel is pva.InstrumentationLevel.Tile
    assert settings.instrumentCompute and settings.instrumentExternalExchange


def test_instrumentation_settings_follow_the_engine_options() -> None:
    off = InstrumentationSettings({"debug.instrument": "false"}, "")
    assert off.computeInstrumentationLevel is pva.InstrumentationLevel.Off
    device = InstrumentationSettings(
        {
            "debug.instrument": "true",
            "debug.computeInstrumentationLevel": "device",
            "debug.instrumentExternalExchange": "false",
        },
        "",
    )
    assert device.computeInstrumentationLevel is pva.InstrumentationLevel.Device
    assert device.externalExchangeInstrumentationLevel is pva.InstrumentationLevel.Off
    vertex = InstrumentationSettings(
        {
            "autoReport.outputExecutionProfile": "true",
            "debug.computeInstrumentationLevel": "vertex",
        },
        "compute",
    )
    assert vertex.computeInstrumentationLevel is pva.InstrumentationLevel.Vertex
    assert vertex.description == "compute"


def test_target_graph_and_ipus_of_a_four_ipu_report(four_ipu_report: Path) -> None:
    report = pva.openReport(four_ipu_report)
    core = open_report(four_ipu_report)
    target = report.compilation.target
    assert (target.numIPUs, target.tilesPerIpu, target.numTiles) == (4, 1472, 4 * 1472)
    assert target.architecture is pva.IPU.Architecture.Ipu2 and target.type == "IPU_MODEL"
    assert target.numReplicas == 1
    assert target.bytesPerIPU == core.target.bytes_per_tile * 1472
    assert target.totalMemory == 4 * target.bytesPerIPU
    graph = report.compilation.graph
    assert graph.numComputeSets == len(core.graph.cs_name)
    assert graph.numVertices == int(core.graph.vc_count.sum())
    assert graph.numVariables == core.graph.num_variables
    assert [t.number for t in report.compilation.ipus[2].tiles[:3]] == [2944, 2945, 2946]
    assert len(report.compilation.ipus[3].tiles) == 1472


def test_runs_follow_each_other_in_microseconds(four_ipu_report: Path) -> None:
    report = pva.openReport(four_ipu_report)
    clock = open_report(four_ipu_report).target.clock_hz
    end = 0.0
    for run in report.execution.runs:
        assert run.microseconds.start == pytest.approx(end)
        assert run.microseconds.end - run.microseconds.start == pytest.approx(
            run.cycles / clock * 1e6
        )
        end = run.microseconds.end
        assert len(run.steps) and run.steps[0].program.name
    assert len(report.execution.steps) == sum(len(r.steps) for r in report.execution.runs)


def test_list_print_length_limits_what_a_list_prints(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    try:
        report.listPrintLength(2)
        text = repr(report.compilation.livenessProgramSteps)
        assert text == "[LivenessProgramStep(0), LivenessProgramStep(1), ... (10 more)]"
        report.listPrintLength(20)
        assert "more" not in repr(report.compilation.livenessProgramSteps)
    finally:
        lazy.PRINT_LENGTH[0] = 10


@pytest.mark.parametrize(
    ("path", "nearest"),
    [
        ("compilation.tiles[0].memory.category.copyDescriptor", "vectorListDescriptor"),
        ("compilation.tiles[0].memory.category.globalMessage", "globalExchangeCode"),
        ("compilation.tiles[0].memory.category.vertexCode.overflowed", "total"),
    ],
)
def test_unmodelled_libpva_attributes_say_so_and_name_the_nearest(
    tutorial4_report: Path, path: str, nearest: str
) -> None:
    scope = {"report": pva.openReport(tutorial4_report)}
    with pytest.raises(
        AttributeError, match=f"is libpva's but popvision-py does not model it.*{nearest}"
    ):
        eval(f"report.{path}", scope)


def test_edges_and_vertex_state_sizes_come_from_the_report_since_format_1_1(
    tutorial4_report: Path,
) -> None:
    report = pva.openReport(tutorial4_report)
    graph = open_report(tutorial4_report).graph
    assert report.compilation.graph.numEdges == graph.num_edges > 0
    # each tile's vertex instance state is its vertices times their types' sizes
    state = np.zeros(len(report.compilation.tiles), dtype=np.int64)
    for compute_set in report.compilation.computeSets:
        for vertex in compute_set.vertices:
            state += vertex.countByTile.astype(np.int64) * vertex.type.size
    recorded = [t.memory.category.vertexInstanceState.total for t in report.compilation.tiles]
    assert state.tolist() == recorded


def test_a_misspelt_attribute_names_the_nearest_covered_one(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    with pytest.raises(AttributeError, match="nearest covered attribute is livenessProgramSteps"):
        report.compilation.livenesProgramSteps  # noqa: B018
    with pytest.raises(AttributeError, match="nearest covered attribute is notAlwaysLiveMemory"):
        report.compilation.livenessProgramSteps[0].notAlwaysLiveMemry  # noqa: B018
    assert not hasattr(report.compilation.tiles[0], "nothing_like_it")


def test_objects_made_twice_are_equal_and_hash_alike(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    a, b = report.compilation.programs[2], report.execution.steps[2].program
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    v1 = report.compilation.livenessProgramSteps[5].notAlwaysLiveMemory.variables
    v2 = report.compilation.livenessProgramSteps[5].notAlwaysLiveMemory.variables
    assert set(v1) == set(v2) and np.all([x == y for x, y in zip(v1, v2, strict=True)])


def test_stream_copy_code_per_step_is_not_told(four_ipu_report: Path) -> None:
    report = pva.openReport(four_ipu_report)
    copies = [p for p in report.compilation.programs if p.type == pva.Program.Type.StreamCopyMid]
    assert copies
    with pytest.raises(AttributeError, match="codeBytesByTile .*hostExchangeCode"):
        copies[0].codeBytesByTile  # noqa: B018
    sync = next(p for p in report.compilation.programs if p.type == pva.Program.Type.Sync)
    assert sync.codeBytesByTile.tolist() == [0] * report.compilation.target.numTiles


def test_an_attribute_error_inside_a_property_keeps_its_message() -> None:
    from functools import cached_property

    from profiler_core.pva.unmodelled import PvaObject, not_modelled

    class Thing(PvaObject):
        @property
        def plain(self) -> int:
            not_modelled("Thing", "plain", "no reason", "other")

        @cached_property
        def cached(self) -> int:
            not_modelled("Thing", "cached", "no reason", "other")

    for name in ("plain", "cached"):
        with pytest.raises(AttributeError, match=f"Thing.{name} is libpva's .* other"):
            getattr(Thing(), name)
    with pytest.raises(AttributeError, match="nearest covered attribute is cached"):
        Thing().cachd  # noqa: B018
