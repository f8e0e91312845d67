"""Issue 26 point 6: the report records the absolute path of the .pvti the process wrote while
the engine compiled and ran, wherever PVTI_OPTIONS put it; older files read with none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ipu_engine import Engine, Graph, IPUModel, Sequence, pvti
from profiler_core.formats.profile_pop import read_profile, write_profile
from profiler_core.formats.profile_pop.writer import build_message
from profiler_core.report import open_report
from profiler_core.trace import open_trace
from tests.profiler_core.factories import make_report
from tests.profiler_core.test_profile_pop_versions import as_format_1_0


@pytest.fixture
def no_trace() -> Iterator[None]:
    pvti.disable()
    yield
    pvti.disable()


def test_the_materials_settings_record_the_trace_written_in_the_working_folder(
    material_traced_report: Path,
):
    work = material_traced_report.parents[1]
    (written,) = work.glob("*.pvti")  # PVTI with no directory: the working folder
    assert not list(material_traced_report.glob("*.pvti"))
    assert not list(material_traced_report.parent.glob("*.pvti"))
    header = open_report(material_traced_report).header
    assert header.traces == [str(written.resolve())]
    assert Path(header.traces[0]).is_absolute()
    # that file is the trace of this program: its compile and run spans are in it
    trace = open_trace(written)
    labels = {trace.label_of(i) for i in range(len(trace))}
    assert {"Engine::compile", "Engine::run(0)"} <= labels


def _engine(directory: Path, **options: str) -> Engine:
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=2).create_device().target)
    given = {"autoReport.all": "true", "autoReport.directory": str(directory), **options}
    return Engine(graph, Sequence(name="traced"), options=given)


def test_a_trace_started_after_compile_is_recorded_at_the_next_run(tmp_path, monkeypatch, no_trace):
    engine = _engine(tmp_path / "report", **{"autoReport.executionProfileProgramRunCount": "1"})
    engine.load(IPUModel("ipu2", tiles_per_ipu=2).create_device())
    engine.run()
    assert open_report(engine.report_folder).header.traces == []  # tracing was off
    monkeypatch.chdir(tmp_path)  # the recorded path does not depend on the working folder
    first = pvti.enable("traces")
    engine.run()  # beyond the kept run count: rewritten for the new trace alone
    second = pvti.enable(tmp_path / "more")
    engine.run()
    pvti.disable()
    expected = [str(tmp_path / "traces" / first.name), str(second.absolute())]
    assert engine.traces == expected
    report = open_report(engine.report_folder)
    assert report.header.traces == expected
    assert len(report.execution.runs) == 1  # still the kept runs only


def test_a_graph_profile_only_report_stays_without_runs_when_a_trace_is_added(tmp_path, no_trace):
    engine = _engine(tmp_path / "report", **{"autoReport.outputExecutionProfile": "false"})
    engine.load(IPUModel("ipu2", tiles_per_ipu=2).create_device())
    path = pvti.enable(tmp_path)
    engine.run()
    pvti.disable()
    report = open_report(engine.report_folder)
    assert report.header.traces == [str(path.absolute())]
    assert report.execution is None


def test_trace_paths_round_trip_and_older_files_have_none(tmp_path):
    profile = make_report(7)[0]
    profile.header.traces = ["/data/run/2026_11_26_093000_42.pvti", "/tmp/ü/x.pvti"]
    write_profile(tmp_path / "new.pop", profile)
    assert read_profile(tmp_path / "new.pop").header.traces == profile.header.traces
    (tmp_path / "old.pop").write_bytes(as_format_1_0(build_message(profile)))
    assert read_profile(tmp_path / "old.pop").header.traces == []
