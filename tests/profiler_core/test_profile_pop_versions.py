"""profile.pop 1.1 adds the target type, replicas, framework, instrumentation, edge count and
vertex state sizes; a 1.0 file (written with the 1.0 schema kept in tests/profiler_core/data)
still reads, with those fields at their "not recorded" values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import capnp
import numpy as np
import pytest

from profiler_core.analysis.execution_summary import execution_summary
from profiler_core.errors import ReportError
from profiler_core.formats.profile_pop import read_profile, write_profile
from profiler_core.formats.profile_pop.writer import build_message
from profiler_core.report import open_report
from tests.profiler_core.factories import make_report

OLD_SCHEMA = Path(__file__).parent / "data" / "profile_1_0.capnp"


def as_format_1_0(message) -> bytes:
    """The same report as a 1.0 writer lays it out: only the fields 1.0 knows, 1.0 sizes."""
    old = capnp.load(str(OLD_SCHEMA), imports=[])
    with old.Profile.from_bytes(message.to_bytes(), traversal_limit_in_words=1 << 40) as r:
        fields = r.to_dict()
    rebuilt = old.Profile.new_message(**fields)
    rebuilt.formatMinor = 0
    return rebuilt.to_bytes()


def with_1_1_fields(profile):
    profile.header.framework = {"Framework": "test", "Replicas": "2"}
    profile.header.instrumentation = "compute (for the execution profile)"
    profile.target = dataclasses.replace(
        profile.target, type="IPU Model", replicas=2, ipus_per_replica=1
    )
    profile.graph.num_edges = 1234
    profile.graph.vt_state_bytes = np.arange(len(profile.graph.vt_name), dtype=np.int64) + 8
    return profile


def test_a_1_0_file_reads_with_the_new_fields_not_recorded(tmp_path):
    profile = with_1_1_fields(make_report(7)[0])
    path = tmp_path / "profile.pop"
    path.write_bytes(as_format_1_0(build_message(profile)))
    reader = read_profile(path)
    assert (reader.header.format_major, reader.header.format_minor) == (1, 0)
    assert reader.header.framework == {} and reader.header.instrumentation == ""
    target = reader.target
    assert (target.type, target.replicas, target.ipus_per_replica) == ("", 0, 0)
    assert target.replication_factor == 1 and target.ipus_in_a_replica == target.num_ipus
    graph = reader.graph
    assert graph.num_edges == -1 and graph.vt_state_bytes is None
    # everything 1.0 had is intact
    assert np.array_equal(graph.vc_count, profile.graph.vc_count)
    assert reader.header.program_name == profile.header.program_name
    assert np.array_equal(reader.memory.by_category, profile.memory.by_category)


def test_a_1_1_file_round_trips_the_new_fields(tmp_path):
    profile = with_1_1_fields(make_report(7)[0])
    write_profile(tmp_path / "profile.pop", profile)
    reader = read_profile(tmp_path / "profile.pop")
    assert reader.header.format_minor == 5  # 1.2 (checksums) to 1.5 (blocks) keep every 1.1 field
    assert reader.header.framework == {"Framework": "test", "Replicas": "2"}
    assert reader.header.instrumentation == "compute (for the execution profile)"
    assert (reader.target.type, reader.target.replicas, reader.target.ipus_per_replica) == (
        "IPU Model",
        2,
        1,
    )
    assert reader.graph.num_edges == 1234
    assert reader.graph.vt_state_bytes.tolist() == profile.graph.vt_state_bytes.tolist()


def test_vertex_state_sizes_of_the_wrong_length_damage_the_graph_only(tmp_path):
    profile = with_1_1_fields(make_report(7)[0])
    message = build_message(profile)
    message.graph.vtStateBytes.shape = [1]
    message.graph.vtStateBytes.data = np.zeros(1, np.int64).tobytes()
    (tmp_path / "profile.pop").write_bytes(message.to_bytes())
    report = open_report(tmp_path)
    with pytest.raises(ReportError, match="vt_state_bytes"):
        _ = report.graph
    assert report.target.replicas == 2  # the other sections still read


def test_busy_cycles_round_trip_and_older_files_read_them_as_not_recorded(tmp_path):
    """Compute cycles excluding idle threads per compute set (issue 20): an optional column."""
    profile = make_report(7)[0]
    assert profile.programs.cs_busy_cycles is None
    write_profile(tmp_path / "old.pop", profile)
    assert read_profile(tmp_path / "old.pop").programs.cs_busy_cycles is None
    busy = np.arange(len(profile.graph.cs_name), dtype=np.int64) * 7
    profile.programs.cs_busy_cycles = busy
    write_profile(tmp_path / "new.pop", profile)
    assert read_profile(tmp_path / "new.pop").programs.cs_busy_cycles.tolist() == busy.tolist()
    # a 1.0 file has no such column either
    (tmp_path / "v10.pop").write_bytes(as_format_1_0(build_message(profile)))
    assert read_profile(tmp_path / "v10.pop").programs.cs_busy_cycles is None


def test_busy_cycles_of_the_wrong_length_are_a_clear_error_naming_them(tmp_path):
    profile = make_report(7)[0]
    profile.programs.cs_busy_cycles = np.zeros(len(profile.graph.cs_name) + 1, dtype=np.int64)
    write_profile(tmp_path / "profile.pop", profile)
    report = open_report(tmp_path)
    with pytest.raises(ReportError, match="'cs_busy_cycles' has .* rows but the graph has"):
        execution_summary(report, 0)
    assert report.graph.num_edges == profile.graph.num_edges  # the other sections still read
