"""The System Trace's view models without a window, on the trace of the bundled
pvti_epochs.py example: lanes, spans, instants, search, call tree, series and heatmaps
against profiler_core.trace and numpy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from popvision_py.viewmodels.system_trace import SystemTraceModel
from popvision_py.viewmodels.system_trace_series import (
    bucket_names,
    heatmap_window,
    series_window,
)
from popvision_py.viewmodels.trace_format import format_duration
from popvision_py.viewmodels.trace_open import is_trace_path, read_trace, report_traces
from profiler_core.errors import LoadCancelledError, ReportError
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import export_chrome, open_trace
from profiler_core.trace.model import Heatmap


@pytest.fixture(scope="module")
def trace(pvti_epochs_trace: Path):
    return open_trace(pvti_epochs_trace)


@pytest.fixture
def model(trace) -> SystemTraceModel:
    return SystemTraceModel(trace)


def _spans_of_thread(trace, t: int) -> int:
    return int(((trace.thread == t) & (trace.kind != EventKind.INSTANT)).sum())


def test_lanes_name_each_thread_and_hold_all_of_its_spans(trace, model) -> None:
    assert sorted(t.name for t in trace.threads) == ["MainThread", "Prefetch"]
    names = [name for name in model.lane_names() if not name.startswith("↳")]
    assert names == ["MainThread", "Prefetch"]
    for t in range(len(trace.threads)):
        rows = [r for r in model.rows if r.thread == t]
        assert len(rows) == int(trace.max_depth()[t]) + 1  # a lane per depth
        assert sum(len(r.lane) for r in rows) == _spans_of_thread(trace, t)
        for d, row in enumerate(rows):
            expected = (trace.thread == t) & (trace.depth == d) & (trace.kind != EventKind.INSTANT)
            assert sorted(row.lane.event.tolist()) == np.flatnonzero(expected).tolist()


def test_the_whole_trace_at_a_wide_window_shows_every_span_once(trace, model) -> None:
    lo, hi = model.time_limits()
    batch = model.spans(lo, hi, 1_000_000)  # 1 px per few ns: nothing shares a column
    spans = np.flatnonzero(trace.kind != EventKind.INSTANT)
    assert sorted(batch.key.tolist()) == spans.tolist()
    # Each span at its own start and end, in the lane of its thread and depth.
    for i in range(len(batch)):
        e = int(batch.key[i])
        assert batch.start[i] == trace.start_ns[e] and batch.end[i] == trace.end_ns[e]
        assert model.row_of(e) == batch.lane[i]
        assert batch.labels[i] == trace.label_of(e)


def test_a_narrow_window_merges_spans_below_a_pixel_and_reads_only_that_range(model) -> None:
    lo, hi = model.time_limits()
    batch = model.spans(lo, hi, 4)
    assert len(batch) <= 2 * 4 * len(model.rows)
    assert ((batch.start >= lo) & (batch.end <= hi)).all()
    assert (batch.key == -1).any()  # 12 steps over 4 px: some share a column
    merged = batch.key == -1
    assert all(
        label.endswith(" events") for label, m in zip(batch.labels, merged, strict=True) if m
    )


def test_instants_are_counted_per_pixel_column(trace, model) -> None:
    lo, hi = model.time_limits()
    counts, first = model.instants(lo, hi, 50)
    t = trace.start_ns[trace.kind == EventKind.INSTANT]
    column = np.minimum(((t - lo) / (hi - lo) * 50).astype(int), 49)
    assert counts.tolist() == np.bincount(column, minlength=50).tolist()
    assert counts.sum() == 3
    assert sorted(trace.label_of(int(e)) for e in first[first >= 0]) == [
        "Epoch 0 begin",
        "Epoch 1 begin",
        "Epoch 2 begin",
    ]


def test_search_finds_every_epoch_in_time_order(trace, model) -> None:
    found = model.search("EPOCH")
    labels = np.array([trace.label_of(i) for i in range(len(trace))])
    expected = np.flatnonzero(np.char.find(np.char.lower(labels.astype(str)), "epoch") >= 0)
    assert sorted(found.tolist()) == sorted(expected.tolist())
    assert (np.diff(trace.start_ns[found]) >= 0).all()
    spans = [trace.label_of(int(e)) for e in found if trace.kind[e] != EventKind.INSTANT]
    assert spans == ["Epoch:0", "Epoch:1", "Epoch:2"]
    assert model.search("  ").size == 0 and model.search("no such label").size == 0


def test_call_tree_total_of_the_epochs_is_the_sum_of_their_durations(trace, model) -> None:
    tree = model.call_tree()
    epochs = [i for i in range(len(tree)) if trace.labels[tree.label[i]].startswith("Epoch:")]
    is_epoch = np.array([trace.label_of(i).startswith("Epoch:") for i in range(len(trace))])
    durations = (trace.end_ns - trace.start_ns)[is_epoch & (trace.kind == EventKind.SPAN)]
    assert len(epochs) == 3
    assert int(tree.total[epochs].sum()) == int(durations.sum())
    steps = [i for i in range(len(tree)) if trace.labels[tree.label[i]] == "Step"]
    step_time = (trace.end_ns - trace.start_ns)[np.array(trace.labels)[trace.label] == "Step"]
    assert int(tree.total[steps].sum()) == int(step_time.sum())
    assert int(tree.self_ns[epochs].sum()) == int(durations.sum() - step_time.sum())
    assert int(tree.count[steps].sum()) == 12


def test_call_tree_of_a_range_counts_only_the_time_inside_it(trace, model) -> None:
    lo, hi = model.time_limits()
    t0, t1 = lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3
    tree = model.call_tree(t0, t1)
    spans = trace.kind != EventKind.INSTANT
    inside = np.clip(trace.end_ns, t0, t1) - np.clip(trace.start_ns, t0, t1)
    roots = tree.parent == -1
    assert tree.total[roots].sum() == pytest.approx(inside[spans & (trace.depth == 0)].sum(), 2)


def test_range_summary_counts_events_overlapping_the_range(trace, model) -> None:
    lo, hi = model.time_limits()
    t0, t1 = lo + (hi - lo) * 0.2, lo + (hi - lo) * 0.6
    duration, count = model.range_summary(t0, t1)
    s, e, instant = trace.start_ns, trace.end_ns, trace.kind == EventKind.INSTANT
    expected = ((~instant) & (s < t1) & (e > t0)).sum() + (instant & (s >= t0) & (s < t1)).sum()
    assert duration == t1 - t0 and count == expected


def test_pin_collapse_merge_and_channel_filter_change_the_lanes(trace, model) -> None:
    prefetch = [t.name for t in trace.threads].index("Prefetch")
    model.set_pinned(prefetch, True)
    assert model.lane_names()[0] == "Prefetch"
    model.set_pinned(prefetch, False)
    model.set_collapsed(0, True)
    assert len(model.rows) == 1 and model.rows[0].kind == "summary"
    summary = model.rows[0].lane
    assert len(summary) == int(((trace.depth == 0) & (trace.kind != EventKind.INSTANT)).sum())
    model.set_collapsed(0, False)
    model.set_merge_all(True)
    assert [r.kind for r in model.rows] == ["merged", "merged"]
    assert sum(len(r.lane) for r in model.rows) == int((trace.kind != EventKind.INSTANT).sum())
    model.set_merge_all(False)
    data = trace.channels.index("Data")
    model.set_channels(set(range(len(trace.channels))) - {data})
    assert "Prefetch" not in model.lane_names()
    lo, hi = model.time_limits()
    assert model.instants(lo, hi, 10)[0].sum() == 3
    model.set_channels(set())
    assert model.rows == [] and model.instants(lo, hi, 10)[0].sum() == 0


def test_details_of_an_epoch_give_self_time_children_and_short_durations(trace, model) -> None:
    epoch = int(model.search("Epoch:1")[0])
    rows = dict(model.details(epoch))
    kids = np.flatnonzero(
        (trace.thread == trace.thread[epoch])
        & (trace.depth == 1)
        & (trace.start_ns >= trace.start_ns[epoch])
        & (trace.end_ns <= trace.end_ns[epoch])
        & (trace.kind == EventKind.SPAN)
    )
    assert rows["Label"] == "Epoch:1" and rows["Channel"] == "Training"
    assert rows["Thread"] == "MainThread" and rows["Children"] == str(len(kids))
    inner = int((trace.end_ns[kids] - trace.start_ns[kids]).sum())
    own = int(trace.end_ns[epoch] - trace.start_ns[epoch]) - inner
    assert rows["Self time"] == format_duration(own)
    assert format_duration(999) == "<1 µs (999 ns)" and format_duration(1500) == "1.500 µs"


def test_series_are_their_samples_when_few_and_min_max_per_pixel_when_many() -> None:
    t = np.arange(10, dtype=np.int64) * 100
    v = np.arange(10.0)
    x, y = series_window(t, v, 0, 1000, 100)
    assert x.tolist() == t.tolist() and y.tolist() == v.tolist()
    rng = np.random.default_rng(1)
    t = np.arange(100_000, dtype=np.int64)
    v = rng.standard_normal(100_000)
    x, y = series_window(t, v, 1000, 51_000, 50)
    assert len(x) <= 2 * 52
    column = (t[1000:51_000] - 1000) // 1000
    for c in (0, 17, 49):
        part = v[1000:51_000][column == c]
        hit = (x > 1000 + c * 1000) & (x < 1000 + (c + 1) * 1000)
        assert sorted(y[hit].tolist()) == sorted([part.min(), part.max()])


def test_heatmap_columns_show_the_sample_in_force() -> None:
    counts = np.array([[1, 0, 0], [0, 2, 0], [0, 0, 3]])
    heatmap = Heatmap("w", "", np.array([0.0, 1.0]), np.array([100, 200, 300]), counts)
    grid = heatmap_window(heatmap, 0, 400, 4)  # columns [0, 100) ... [300, 400]
    assert np.isnan(grid[:, 0]).all()
    assert grid[:, 1].tolist() == [1, 0, 0] and grid[:, 2].tolist() == [0, 2, 0]
    assert grid[:, 3].tolist() == [0, 0, 3]
    # the last sample of a trace, a little before the window's end (less than a column
    # after the last column's centre) or at it, owns the last column: it was not shown
    for last in (390, 400):
        late = Heatmap("w", "", np.array([0.0, 1.0]), np.array([100, 200, last]), counts)
        grid = heatmap_window(late, 0, 400, 4)
        assert grid[:, 3].tolist() == [0, 0, 3] and grid[:, 2].tolist() == [0, 2, 0]
    assert bucket_names(np.array([0.0, 0.5, 1.0])) == ["< 0", "0 – 0.5", "0.5 – 1", "≥ 1"]


def test_series_and_heatmap_of_the_example_are_read(trace) -> None:
    (t, values) = trace.series["Loss"]["Training Loss"]
    assert values.tolist() == pytest.approx([1 / (1 + i) for i in range(12)])
    heat = trace.heatmaps["weights"]
    assert heat.counts.tolist() == [[0, 1, 1, 1], [0, 1, 1, 1], [0, 0, 2, 1]]


def test_a_chrome_export_reads_back_with_the_same_spans(trace, tmp_path: Path) -> None:
    path = export_chrome(trace, tmp_path / "epochs.json")
    again = read_trace([path]).model.trace
    assert len(again) == len(trace)
    for t in (trace, again):
        assert sorted(t.labels) == sorted(trace.labels)
    key = sorted(
        zip([trace.label_of(i) for i in range(len(trace))], trace.start_ns.tolist(), strict=True)
    )
    key_again = sorted(
        zip([again.label_of(i) for i in range(len(again))], again.start_ns.tolist(), strict=True)
    )
    assert key == key_again


def test_trace_paths_and_a_report_folders_traces(pvti_epochs_trace: Path, tmp_path: Path) -> None:
    assert is_trace_path(pvti_epochs_trace) and is_trace_path(tmp_path / "x.json")
    assert is_trace_path(pvti_epochs_trace.parent)
    report = tmp_path / "report" / "training"
    report.mkdir(parents=True)
    (report / "profile.pop").write_bytes(b"")
    assert not is_trace_path(report)
    assert report_traces(report) == []
    beside = report.parent / "host.pvti"
    beside.write_bytes(pvti_epochs_trace.read_bytes())
    assert report_traces(report) == [beside]


def test_reading_can_be_cancelled_and_reports_progress(pvti_epochs_trace: Path) -> None:
    seen: list[str] = []
    opened = read_trace([pvti_epochs_trace], lambda f, text: seen.append(text))
    assert seen[0].startswith("Reading") and opened.model.open_spans() == 0
    assert opened.incomplete_text() == ""
    with pytest.raises(LoadCancelledError):
        read_trace([pvti_epochs_trace], stopped=lambda: True)


HALF_WRITTEN = """
import os, sys
import ipu_engine.pvti as pvti
pvti.enable(sys.argv[1])
channel = pvti.createTraceChannel("Training")
with pvti.Tracepoint(channel, "epoch"):
    for _ in range(3):
        with pvti.Tracepoint(channel, "step"):
            pass
    pvti.current_writer().flush()
    os._exit(0)  # dies inside the epoch, the trace never closed
"""


def write_half_written_trace(directory: Path) -> Path:
    subprocess.run([sys.executable, "-c", HALF_WRITTEN, str(directory)], check=True, timeout=60)
    (path,) = directory.glob("*.pvti")
    return path


def test_a_half_written_trace_shows_its_committed_events_and_says_so(tmp_path: Path) -> None:
    opened = read_trace([write_half_written_trace(tmp_path)])
    trace = opened.model.trace
    labels = sorted(trace.label_of(i) for i in range(len(trace)))
    assert labels == ["epoch", "step", "step", "step"]
    assert opened.model.open_spans() == 1
    assert "incomplete" in opened.incomplete_text() and "1 span(s)" in opened.incomplete_text()


def test_json_that_is_not_a_trace_names_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ReportError, match="x.json"):
        read_trace([path])
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ReportError, match="no trace event could be read"):
        read_trace([deep])
    with pytest.raises(ReportError, match="over the"):
        read_trace([path], max_json_bytes=4)


def test_ipu_tracks_of_another_file_share_the_time_axis(pvti_epochs_trace: Path, tmp_path: Path):
    from tests.profiler_core.pvti_samples import IPU_STEPS, write_small_trace

    folder = tmp_path / "together"
    folder.mkdir()
    shutil.copy(pvti_epochs_trace, folder / pvti_epochs_trace.name)
    small = write_small_trace(folder).path
    opened = read_trace([folder])
    model, trace = opened.model, opened.model.trace
    names = [n for n in model.lane_names() if not n.startswith("↳")]
    # Per process: its host threads, then its tracks; two processes are named apart.
    assert names == [
        "pvti_epochs.py · MainThread",
        "pvti_epochs.py · Prefetch",
        "small · main",
        "small · IPU 0",
    ]
    ipu = [t.name for t in trace.threads].index("IPU 0")
    row = model.lane_names().index("small · IPU 0")
    spans = model.rows[row].lane
    first = open_trace(small)
    # IPU steps keep their durations and their offsets from the small file's origin.
    assert (spans.end - spans.start).tolist() == [e - s for _, s, e in IPU_STEPS]
    shift = first.origin_wall_ns - trace.origin_wall_ns
    own = first.start_ns[first.thread == [t.name for t in first.threads].index("IPU 0")]
    assert spans.start.tolist() == (own + shift).tolist()
    assert trace.threads[ipu].kind == "track"


def test_labels_longer_than_200_characters_are_cut_and_say_their_length() -> None:
    from popvision_py.viewmodels.trace_format import shown_label

    assert shown_label("epoch") == "epoch"
    assert shown_label("a" * 200) == "a" * 200
    assert shown_label("b" * 1_000_000) == "b" * 200 + "… (1,000,000 characters)"
