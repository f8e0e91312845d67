"""profile.pop 1.3 stores the graph's counts beside the graph, with a checksum of their own, so
the Summary shows them without decoding (and checking) the graph's columns; older files count
them from the columns; counts that disagree with the columns are refused."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from profiler_core.analysis.graph_stats import graph_statistics
from profiler_core.errors import ChecksumError, ReportError
from profiler_core.formats.profile_pop import ProfileReader, write_profile
from profiler_core.formats.profile_pop.writer import build_message
from profiler_core.report import open_report
from tests.profiler_core.checksummed import resealed
from tests.profiler_core.factories import make_report


def counted_by_hand(profile) -> dict[str, int]:
    """The counts from the written columns, with numpy alone."""
    g = profile.graph
    constants = int(np.asarray(g.var_is_constant, dtype=bool).sum())
    return {
        "variables": len(g.var_name) - constants,
        "constants": constants,
        "vertices": int(np.asarray(g.vc_count, dtype=np.int64).sum()),
        "edges": int(g.num_edges),
        "compute_sets": len(g.cs_name),
        "codelets": len(g.vt_name),
    }


@pytest.fixture
def written(tmp_path):
    profile = make_report(5)[0]
    profile.graph.var_is_constant[::3] = True  # some constants, so the two counts differ
    write_profile(tmp_path / "profile.pop", profile)
    return tmp_path, profile


def test_the_counts_are_stored_and_read_without_the_graphs_columns(written):
    folder, profile = written
    with ProfileReader(folder / "profile.pop") as reader:
        assert reader.header.format_minor >= 3
        assert vars(reader.graph_counts) == counted_by_hand(profile)
    # The graph's columns changed after writing (its region starts): the counts still read,
    # the graph does not -- so reading the counts did not decode the columns.
    message = build_message(profile)
    starts = np.asarray(profile.graph.region_start, dtype=np.int64).copy()
    starts[0] += 1
    message.graph.regionStart.data = starts.tobytes()
    (folder / "profile.pop").write_bytes(message.to_bytes())
    with open_report(folder) as report:
        stats = graph_statistics(report)
        assert (stats.variables, stats.constants) == (
            counted_by_hand(profile)["variables"],
            counted_by_hand(profile)["constants"],
        )
        with pytest.raises(ChecksumError, match="section 'graph' fails its checksum"):
            _ = report.graph


def test_a_1_2_file_counts_them_from_the_graph(written):
    folder, profile = written
    message = build_message(profile)
    message.disown("graphCounts")
    message.formatMinor = 2
    (folder / "profile.pop").write_bytes(message.to_bytes())
    with ProfileReader(folder / "profile.pop") as reader:
        assert reader.integrity_note == ""  # 1.2 has checksums
        assert vars(reader.graph_counts) == counted_by_hand(profile)


def test_damaged_counts_are_refused_by_their_own_checksum(written):
    folder, profile = written
    message = build_message(profile)
    message.graphCounts.vertices += 1
    (folder / "profile.pop").write_bytes(message.to_bytes())
    with ProfileReader(folder / "profile.pop") as reader:
        with pytest.raises(ChecksumError, match=r"section 'graph' \(its counts\) fails its"):
            _ = reader.graph_counts
        assert len(reader.graph.var_name) == len(profile.graph.var_name)  # columns intact


def test_counts_that_disagree_with_the_columns_are_refused(written):
    """A writer that stored other counts than its columns' (checksums made to match)."""
    folder, profile = written
    message = build_message(profile)
    message.graphCounts.variables += 2
    (folder / "profile.pop").write_bytes(resealed(message).to_bytes())
    with ProfileReader(folder / "profile.pop") as reader:
        assert reader.graph_counts.variables == counted_by_hand(profile)["variables"] + 2
        expected = counted_by_hand(profile)["variables"]
        with pytest.raises(
            ReportError,
            match=rf"counts differ from its columns: variables {expected + 2} "
            rf"\(columns: {expected}\)",
        ):
            _ = reader.graph


@pytest.mark.parametrize("field", ["variables", "edges"])
def test_missing_or_negative_counts_are_a_clear_error(written, field):
    folder, profile = written
    message = build_message(profile)
    setattr(message.graphCounts, field, -5)
    (folder / "profile.pop").write_bytes(resealed(message).to_bytes())
    refused = pytest.raises(ReportError, match=f"its counts give -5 {field}")
    with ProfileReader(folder / "profile.pop") as reader, refused:
        _ = reader.graph_counts
    message = build_message(profile)
    message.disown("graphCounts")
    (folder / "profile.pop").write_bytes(message.to_bytes())
    missing = pytest.raises(
        ReportError, match=r"its counts are missing \(a 1\.[345] file has them\)"
    )
    with ProfileReader(folder / "profile.pop") as reader, missing:
        _ = reader.graph_counts


def test_the_counts_checksum_is_crc32_of_the_documented_stream(written):
    """formats/README.md: each count as 16 little-endian signed bytes, in the order variables,
    constants, vertices, edges, compute sets, codelets -- computed here with zlib alone."""
    folder, profile = written
    by_hand = counted_by_hand(profile)
    order = ("variables", "constants", "vertices", "edges", "compute_sets", "codelets")
    stream = b"".join(by_hand[k].to_bytes(16, "little", signed=True) for k in order)
    message = build_message(profile)
    (entry,) = [e for e in message.checksums if e.section == "graph_counts"]
    assert entry.crc32 == zlib.crc32(stream)
