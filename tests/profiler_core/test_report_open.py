"""Opening reports: folders or profile.pop, the summary, progress and cancellation, and partial
reports whose intact sections still load while the damaged ones name their problem."""

from __future__ import annotations

import threading
import time

import pytest

import profiler_core.report.open as report_open
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.operations import operations_table
from profiler_core.errors import LoadCancelledError, ReportError
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from profiler_core.formats.profile_pop.writer import build_message, write_message
from profiler_core.report import SECTIONS, open_report
from tests.profiler_core.factories import make_debug, make_profile, make_report


def write_folder(folder, seed=7, patch=None, debug=True):
    folder.mkdir(parents=True, exist_ok=True)
    profile, debug_data = make_report(seed)
    if patch is None:
        write_profile(folder / "profile.pop", profile)
    else:
        message = build_message(profile)
        patch(message)
        write_message(folder / "profile.pop", message)
    if debug:
        write_debug(folder / "debug.cbor", debug_data)
    return profile, debug_data


def test_a_folder_and_its_profile_open_the_same_report(tmp_path):
    write_folder(tmp_path / "r")
    by_folder, by_file = open_report(tmp_path / "r"), open_report(tmp_path / "r" / "profile.pop")
    assert by_folder.folder == by_file.folder == tmp_path / "r"
    assert by_folder.name == "r"
    assert [p.name for p in by_folder.files] == ["profile.pop", "debug.cbor"]
    assert by_folder.header.report_id == by_file.header.report_id


def test_missing_reports_are_named_with_a_hint(tmp_path):
    with pytest.raises(ReportError, match="no such file or folder") as caught:
        open_report(tmp_path / "nowhere")
    assert caught.value.path == tmp_path / "nowhere"
    write_folder(tmp_path / "reports" / "training")
    with pytest.raises(
        ReportError, match="no profile.pop in this folder; it holds reports in training"
    ):
        open_report(tmp_path / "reports")


def test_load_reports_progress_in_order_and_ends_at_one(tmp_path):
    write_folder(tmp_path / "r")
    seen = []
    errors = open_report(tmp_path / "r").load(progress=lambda f, s: seen.append((f, s)))
    assert errors == {}
    assert [s for _, s in seen] == [*SECTIONS, "done"]
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == 1.0


def test_cancelling_stops_between_sections(tmp_path):
    write_folder(tmp_path / "r")
    seen = []
    with pytest.raises(LoadCancelledError, match="cancelled"):
        open_report(tmp_path / "r").load(
            progress=lambda f, s: seen.append(s), cancel=lambda: len(seen) >= 2
        )
    assert seen == list(SECTIONS[:2])
    with pytest.raises(LoadCancelledError):
        open_report(tmp_path / "r", cancel=lambda: True)


def test_the_summary_of_tutorial4(tutorial4_report):
    report = open_report(tutorial4_report)
    summary = report.summary(check_debug=True)
    by_category = report.memory.by_category
    assert (summary.program_name, summary.num_tiles, summary.num_ipus) == ("tutorial4", 1472, 1)
    assert summary.bytes_per_tile == 638_976 and summary.clock_hz == 1.33e9
    assert summary.memory.total_including_gaps == by_category.sum()
    assert summary.memory.total_excluding_gaps == by_category[:13].sum()
    assert summary.memory.capacity == 1472 * 638_976
    assert summary.memory.largest_tile_bytes == by_category.sum(axis=0).max()
    assert summary.memory.tiles_over_limit == 0
    assert summary.always_live_bytes == 4 * (900 * 600 + 600 * 300 + 300 * 200 + 900 * 200)
    assert summary.peak_live_step_name == "m4/Reduce"
    (run,) = summary.runs
    assert run.cycles == report.execution.runs[0].total_cycles
    assert run.seconds == pytest.approx(run.cycles / 1.33e9)
    # the serialized graph (autoReport.all writes it since issue 41) is a report file too
    assert set(summary.files) == {"profile.pop", "debug.cbor", "serialized_graph.bundle"}
    assert summary.producer == "ipu_engine" and summary.out_of_memory is False
    assert summary.errors == {}
    assert summary.to_dict()["memory"]["tiles_over_limit"] == 0


def test_a_damaged_section_leaves_the_rest_of_the_summary(tmp_path):
    def wrong_shape(message):
        message.memory.byCategory.shape[1] = 99

    write_folder(tmp_path / "r", patch=wrong_shape)
    report = open_report(tmp_path / "r")
    summary = report.summary()
    assert summary.memory is None
    assert set(summary.errors) == {"memory"}
    assert "section 'memory'" in summary.errors["memory"]
    assert str(tmp_path / "r" / "profile.pop") in summary.errors["memory"]
    assert summary.num_tiles == 8 and summary.peak_live_step is not None
    assert len(summary.runs) == 2
    with pytest.raises(ReportError, match="section 'memory'"):
        memory_table(report)
    assert report.load().keys() == {"memory"}


def test_a_debug_file_of_another_report_is_named_and_the_profile_still_works(tmp_path):
    write_folder(tmp_path / "r", debug=False)
    write_debug(tmp_path / "r" / "debug.cbor", make_debug("someone-else", 7))
    report = open_report(tmp_path / "r")
    assert report.summary().errors == {}  # debug.cbor is only read when asked
    assert set(report.summary(check_debug=True).errors) == {"debug"}
    with pytest.raises(ReportError) as caught:
        _ = report.debug
    assert caught.value.path == tmp_path / "r" / "debug.cbor"
    assert "someone-else" in str(caught.value)
    assert memory_table(report).num_tiles == 8
    with pytest.raises(ReportError):
        operations_table(report)


@pytest.mark.parametrize("keep", [0, 10, 200])
def test_a_truncated_debug_file_is_named(tmp_path, keep):
    write_folder(tmp_path / "r")
    path = tmp_path / "r" / "debug.cbor"
    path.write_bytes(path.read_bytes()[:keep])
    report = open_report(tmp_path / "r")
    assert report.debug_or_none() is None
    with pytest.raises(ReportError) as caught:
        _ = report.debug
    assert caught.value.path == path


def test_a_report_without_runs_or_debug_summarises(tmp_path):
    folder = tmp_path / "compiled"
    folder.mkdir()
    write_profile(folder / "profile.pop", make_profile(2, executed=False))
    summary = open_report(folder).summary(check_debug=True)
    assert summary.runs == [] and summary.errors == {}
    assert list(summary.files) == ["profile.pop"]


def test_debug_cbor_is_decoded_once_when_two_threads_ask_at_once(tmp_path, monkeypatch):
    # The window decodes debug.cbor in a worker after the first paint while a page (on the
    # GUI thread or in its own worker) may ask for it too: one decode, both get its result.
    _, debug_data = write_folder(tmp_path / "r")
    report = open_report(tmp_path / "r")
    calls = []
    real = report_open.read_debug

    def slow_read(path, verify=True):
        calls.append(path)
        time.sleep(0.05)  # long enough for the other thread to ask meanwhile
        return real(path, verify)

    monkeypatch.setattr(report_open, "read_debug", slow_read)
    got = []
    threads = [threading.Thread(target=lambda: got.append(report.debug)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert got[0] is got[1] and list(got[0].name) == list(debug_data.name)
