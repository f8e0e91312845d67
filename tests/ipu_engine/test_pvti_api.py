"""The libpvti-style API: tracepoints, instant events, series, heatmaps, channels, hooks."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ipu_engine.pvti as pvti
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import Trace, open_trace


@pytest.fixture
def trace_dir(tmp_path: Path) -> Iterator[Path]:
    pvti.enable(tmp_path)
    yield tmp_path
    pvti.disable()


def finish(directory: Path) -> Trace:
    pvti.disable()
    (path,) = directory.glob("*.pvti")
    return open_trace(path)


def thread_rows(trace: Trace, name: str) -> list[tuple[str, int, int]]:
    """(label, depth, kind) of one thread's events in start order."""
    thread = [t.name for t in trace.threads].index(name)
    part = trace.thread_slice(thread)
    return [(trace.labels[lab], int(d), int(k)) for lab, d, k in
            zip(trace.label[part], trace.depth[part], trace.kind[part], strict=True)]  # fmt: skip


def test_nested_tracepoints_decorators_and_begin_end_give_depths(trace_dir: Path) -> None:
    channel = pvti.createTraceChannel("App")

    @pvti.Tracepoint(channel, "load")
    def load() -> int:
        pvti.Tracepoint.event(channel, "loaded")
        return 3

    with pvti.Tracepoint(channel, "epoch"):
        assert load() == 3
        pvti.Tracepoint.begin(channel, "validate")
        with pvti.Tracepoint(channel, "batch"):
            pass
        pvti.Tracepoint.end(channel, "validate")
    trace = finish(trace_dir)
    span, instant = EventKind.SPAN, EventKind.INSTANT
    assert thread_rows(trace, threading.current_thread().name) == [
        ("epoch", 0, span), ("load", 1, span), ("loaded", 2, instant), ("validate", 1, span),
        ("batch", 2, span),
    ]  # fmt: skip
    assert trace.channels == ("App",)


def test_spans_are_timed_by_the_monotonic_clock(trace_dir: Path) -> None:
    channel = pvti.createTraceChannel("App")
    before = time.monotonic_ns()
    with pvti.Tracepoint(channel, "sleep"):
        time.sleep(0.02)
    after = time.monotonic_ns()
    writer_origin = pvti.current_writer().origin_monotonic_ns
    trace = finish(trace_dir)
    start, end = int(trace.start_ns[0]) + writer_origin, int(trace.end_ns[0]) + writer_origin
    assert before <= start and end <= after and end - start >= 20_000_000


def test_each_thread_has_its_own_row_and_nesting(trace_dir: Path) -> None:
    channel = pvti.createTraceChannel("Workers")
    tids: dict[str, int] = {}

    def work(name: str) -> None:
        tids[name] = threading.get_native_id()
        for i in range(3):
            with pvti.Tracepoint(channel, f"{name} job {i}"), pvti.Tracepoint(channel, "inner"):
                pass

    threads = [threading.Thread(target=work, args=(f"w{i}",), name=f"w{i}") for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trace = finish(trace_dir)
    for name, tid in tids.items():
        rows = thread_rows(trace, name)
        expected = [(f"{name} job {i}", 0, 0) for i in range(3)]
        assert rows[0::2] == expected and rows[1::2] == [("inner", 1, 0)] * 3
        assert next(t for t in trace.threads if t.name == name).os_tid == tid


def test_graph_series_record_values_in_order(trace_dir: Path) -> None:
    loss = pvti.Graph("Loss", "nats").addSeries("train")
    accuracy = pvti.Graph("Accuracy", "%").add_series("val")
    for i in range(5):
        loss.add(1 / (i + 1))
    accuracy.add(90)
    trace = finish(trace_dir)
    assert trace.series["Loss"]["train"][1].tolist() == [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]
    assert np.all(np.diff(trace.series["Loss"]["train"][0]) >= 0)
    assert trace.series["Accuracy"]["val"][1].tolist() == [90.0]
    assert trace.series_units == {"Loss": "nats", "Accuracy": "%"}


def test_a_nan_or_infinite_series_value_is_kept_and_nothing_after_it_is_lost(
    trace_dir: Path,
) -> None:
    loss = pvti.Graph("Loss").addSeries("train")
    channel = pvti.createTraceChannel("App")
    for value in (1.0, float("nan"), float("inf"), float("-inf")):
        loss.add(value)
    with pvti.Tracepoint(channel, "after the nan"):
        loss.add(2.0)
    trace = finish(trace_dir)
    values = trace.series["Loss"]["train"][1]
    assert np.isnan(values[1]) and values[[0, 2, 3, 4]].tolist() == [1.0, np.inf, -np.inf, 2.0]
    assert trace.labels == ("after the nan",) and trace.warnings == ()


def test_heatmap_samples_count_values_between_edges(trace_dir: Path) -> None:
    heatmap = pvti.HeatmapDouble("w", [0.0, 1.0, 2.0], "")
    ints = pvti.HeatmapInt64("sizes", [10, 100])
    heatmap.add([-1, 0, 0.5, 1, 1.5, 2, 5])
    heatmap.add(np.array([0.25]))
    ints.add([1, 10, 99, 100, 1000, 5])
    trace = finish(trace_dir)
    # buckets: below 0 | [0, 1) | [1, 2) | 2 and above -- counted by hand
    assert trace.heatmaps["w"].counts.tolist() == [[1, 2, 2, 2], [0, 1, 0, 0]]
    assert trace.heatmaps["w"].edges.tolist() == [0.0, 1.0, 2.0]
    assert trace.heatmaps["sizes"].counts.tolist() == [[2, 2, 2]]


def test_a_disabled_channel_records_nothing_until_enabled(trace_dir: Path) -> None:
    quiet = pvti.createTraceChannel("Quiet")
    loud = pvti.createTraceChannel("Loud")
    pvti.disableTraceChannel(quiet)
    assert pvti.listTraceChannel()[-2:] == [["Quiet", False], ["Loud", True]]
    with pvti.Tracepoint(loud, "a"), pvti.Tracepoint(quiet, "hidden"):
        pvti.Tracepoint.event(quiet, "hidden too")
    pvti.enableTraceChannel(quiet)
    with pvti.Tracepoint(quiet, "b"):
        pass
    trace = finish(trace_dir)
    assert sorted(trace.labels[i] for i in trace.label) == ["a", "b"]


def test_with_tracing_off_nothing_is_written(tmp_path: Path) -> None:
    pvti.disable()
    channel = pvti.createTraceChannel("Off")
    with pvti.Tracepoint(channel, "nothing"):
        pvti.Tracepoint.event(channel, "none")
    pvti.Graph("g").addSeries("s").add(1)
    pvti.ipu_track_span(0, "Compute", 0, 1)
    assert pvti.current_writer() is None and pvti.getCurrentTraceFilename() == ""
    assert list(tmp_path.iterdir()) == []


def test_engine_hooks_write_ipu_tracks(trace_dir: Path) -> None:
    writer = pvti.current_writer()
    assert writer is not None and pvti.getCurrentTraceFilename() == str(writer.path)
    t = time.monotonic_ns()
    pvti.ipu_track_span(0, "Compute", t, t + 700)
    pvti.ipu_track_span(0, "Exchange", t + 700, t + 900)
    pvti.ipu_track_spans(1, np.array([t, t + 50]), np.array([t + 50, t + 60]),
                         ["Sync", "StreamCopy"], np.array([0, 1]))  # fmt: skip
    trace = finish(trace_dir)
    assert thread_rows(trace, "IPU 0") == [("Compute", 0, 0), ("Exchange", 0, 0)]
    assert thread_rows(trace, "IPU 1") == [("Sync", 0, 0), ("StreamCopy", 0, 0)]
    ipu0 = next(th for th in trace.threads if th.name == "IPU 0")
    assert ipu0.kind == "track" and ipu0.os_tid is None
    assert set(trace.channels) == {pvti.IPU_CHANNEL}


def test_instrument_fn_labels_calls_with_the_function_name(trace_dir: Path) -> None:
    channel = pvti.createTraceChannel("Fn")

    @pvti.instrument_fn(channel)
    def forward(x: int) -> int:
        return x + 1

    assert forward(1) == 2
    trace = finish(trace_dir)
    assert trace.labels == (forward.__qualname__,)


def test_snake_case_names_are_the_libpvti_names() -> None:
    assert pvti.create_trace_channel is pvti.createTraceChannel
    assert pvti.enable_trace_channel is pvti.enableTraceChannel
    assert pvti.get_current_trace_filename is pvti.getCurrentTraceFilename
    assert pvti.Graph.add_series is pvti.Graph.addSeries
    assert pvti.trace_drivers is pvti.traceDrivers and pvti.traceDrivers.name == "Drivers"


def test_duration_stops_recording_after_its_time(tmp_path: Path) -> None:
    pvti.enable(tmp_path, duration_s=0.2)
    channel = pvti.createTraceChannel("Timed")
    pvti.Tracepoint.event(channel, "early")
    time.sleep(0.4)
    pvti.Tracepoint.event(channel, "late")
    trace = finish(tmp_path)
    assert trace.labels == ("early",)


def test_enable_with_channels_records_only_those(tmp_path: Path) -> None:
    pvti.enable(tmp_path, channels=["Kept"])
    for name in ("Kept", "Dropped"):
        pvti.Tracepoint.event(pvti.createTraceChannel(name), name)
    trace = finish(tmp_path)
    assert trace.labels == ("Kept",)
    pvti.enableTraceChannel(pvti.createTraceChannel("Dropped"))


def _child_traces() -> None:
    pvti.Tracepoint.event(pvti.createTraceChannel("Child"), "in child")


def test_a_forked_child_writes_its_own_file(trace_dir: Path) -> None:
    pvti.Tracepoint.event(pvti.createTraceChannel("Parent"), "in parent")
    child = multiprocessing.get_context("fork").Process(target=_child_traces)
    child.start()
    child.join(30)
    assert child.exitcode == 0
    pvti.disable()
    files = sorted(trace_dir.glob("*.pvti"))
    assert len(files) == 2
    by_pid = {open_trace(f).processes[0].pid: open_trace(f) for f in files}
    assert by_pid.pop(child.pid).labels == ("in child",)
    (parent,) = by_pid.values()
    assert parent.labels == ("in parent",)


def test_spans_ending_out_of_order_are_all_recorded(trace_dir: Path) -> None:
    # Coroutines sharing a thread can end their spans in any order.
    channel = pvti.createTraceChannel("Async")
    first, second = pvti.Tracepoint(channel, "first"), pvti.Tracepoint(channel, "second")
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    with pvti.Tracepoint(channel, "after"):
        pass
    second.__exit__(None, None, None)
    trace = finish(trace_dir)
    rows = thread_rows(trace, threading.current_thread().name)
    assert sorted(rows) == [("after", 1, 0), ("first", 0, 0), ("second", 1, 0)]


class Dataset:
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> int:
        return index * 2

    def describe(self) -> str:
        return f"{self.n} items"


def test_instrument_traces_the_named_methods_of_one_object(trace_dir: Path) -> None:
    channel = pvti.createTraceChannel("Data")
    traced, plain = Dataset(3), Dataset(3)
    assert pvti.instrument(traced, ["__len__", "__getitem__"], channel) is traced
    assert len(traced) == 3 and traced[2] == 4 and traced.describe() == "3 items"
    assert len(plain) == 3 and plain[1] == 2  # another object of the class is not traced
    assert isinstance(traced, Dataset) and type(traced).__name__ == "Dataset"
    pvti.instrument(Dataset, "describe", channel)  # a class: every object, one method
    assert plain.describe() == "3 items"
    trace = finish(trace_dir)
    rows = thread_rows(trace, threading.current_thread().name)
    assert [label for label, _, _ in rows] == [
        "Dataset.__len__", "Dataset.__getitem__", "Dataset.describe",
    ]  # fmt: skip
    assert trace.channels == ("Data",)
    with pytest.raises(AttributeError, match="no method 'missing'"):
        pvti.instrument(plain, ["missing"], channel)


def test_current_file_channel_list_and_predefined_channels(trace_dir: Path) -> None:
    assert pvti.getCurrentTraceFilename().endswith(".pvti")
    assert Path(pvti.getCurrentTraceFilename()).parent == trace_dir
    channel = pvti.createTraceChannel("Listed")
    pvti.disableTraceChannel(channel)
    listed = dict((name, enabled) for name, enabled in pvti.listTraceChannel())
    assert listed["Listed"] is False and not pvti.checkTraceChannel(channel)
    assert {"Drivers", "Poplar", "Framework"} <= set(listed)
    assert (pvti.traceDrivers.name, pvti.tracePoplar.name, pvti.traceFramework.name) == (
        "Drivers", "Poplar", "Framework",
    )  # fmt: skip
    pvti.enableTraceChannel(channel)
    pvti.Tracepoint.begin(channel, "opened")
    pvti.Tracepoint.end(channel, "opened")
    trace = finish(trace_dir)
    assert pvti.getCurrentTraceFilename() == ""
    assert thread_rows(trace, threading.current_thread().name) == [("opened", 0, EventKind.SPAN)]
