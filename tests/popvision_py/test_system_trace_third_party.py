"""PyTorch and TensorFlow traces in the window (issue 38): a gzip Kineto trace opened with
File > Open trace…, dropped, or named anything shows its lanes named as the tools name
them, its CPU -> GPU flows as arrows, and what it could not show in the banner -- no box
over it, and a status line that says one thing. Every lane has a name, none is cut when
the column fits it, and a recording's banner says when the run has ended. Expected texts
are written by hand from the JSON below."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent

from popvision_py.__main__ import _path_groups
from popvision_py.app.recorder import LiveTrace
from popvision_py.viewmodels.system_trace import SystemTraceModel
from popvision_py.views.system_trace.view import SystemTraceView
from popvision_py.views.timeline.plot import LaneAxis
from profiler_core.formats.pvti import PvtiWriter
from profiler_core.trace import open_trace
from tests.popvision_py.test_run import run_through_dialog, wait_finished
from tests.popvision_py.test_system_trace_view import open_trace_with_menu, wait_trace


def meta(kind: str, pid: int, tid: int | None = None, **args) -> dict:
    ev = {"ph": "M", "name": kind, "pid": pid, "args": args}
    return ev if tid is None else {**ev, "tid": tid}


def x(name: str, ts: int, dur: int, pid: int, tid: int) -> dict:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


def flow(ph: str, id_: int, ts: int, pid: int, tid: int, **more) -> dict:
    return {"ph": ph, "id": id_, "ts": ts, "pid": pid, "tid": tid, "cat": "ac2g",
            "name": "ac2g", **more}  # fmt: skip


# As PyTorch's profiler (Kineto) writes a step: the CPU and each GPU are processes of one
# name told apart by their labels; kernels' flow ends come before their launches' starts.
KINETO = [
    meta("process_name", 100, name="python3.10"),
    meta("process_labels", 100, labels="CPU"),
    meta("process_sort_index", 100, sort_index=100),
    meta("thread_name", 100, 100, name="thread 100 (python3.10)"),
    meta("process_name", 0, name="python3.10"),
    meta("process_labels", 0, labels="GPU 0"),
    meta("process_sort_index", 0, sort_index=16777216),
    meta("thread_name", 0, 7, name="stream 7"),
    x("aten::conv2d", 0, 100, 100, 100),
    x("cudaLaunchKernel", 10, 5, 100, 100),
    x("cudaLaunchKernel", 40, 5, 100, 100),
    x("cudaStreamIsCapturing", 60, 2, 100, 100),
    x("kernel_a", 30, 8, 0, 7),
    x("kernel_b", 50, 10, 0, 7),
    flow("f", 1, 30, 0, 7, bp="e"),
    flow("f", 2, 50, 0, 7, bp="e"),
    flow("f", 3, 60, 100, 100, bp="e"),  # a runtime call's end with no start, as Kineto has
    flow("s", 1, 10, 100, 100),
    flow("s", 2, 40, 100, 100),
]
KINETO_LANES = [
    "python3.10 (CPU) · thread 100 (python3.10)",
    "↳ depth 1",
    "python3.10 (GPU 0) · stream 7",
]
KINETO_BANNER = "{name}: 1 event(s) skipped (1 flow steps or ends with no start)"


def write_gz(path: Path, events: list[dict]) -> Path:
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events}, f)
    return path


def assert_no_box(window) -> None:
    box = window.message_box
    assert box is None or not box.isVisible(), box.text()


def test_a_gzip_kineto_trace_opens_from_the_dialog_with_its_flows_and_no_box(
    qtbot, window, tmp_path
):
    path = write_gz(tmp_path / "rank-0.pt.trace.json.gz", KINETO)
    view = open_trace_with_menu(qtbot, window, path)
    assert window.opened == [] and window.current_view() is view  # never tried as a report
    assert view.model.lane_names() == KINETO_LANES
    trace = view.model.trace
    arrows = sorted((trace.label_of(a), trace.label_of(b)) for a, b in trace.flows.tolist())
    assert arrows == [("cudaLaunchKernel", "kernel_a"), ("cudaLaunchKernel", "kernel_b")]
    window.grab()  # paint: the arrows on screen are drawn
    assert len(view.flow_item.arrows) == 2
    assert_no_box(window)
    assert view.banner.isVisible()
    assert view.banner.text() == KINETO_BANNER.format(name=path.name)
    status = window.statusBar().currentMessage()
    assert re.fullmatch(
        rf"Opened trace {re.escape(path.name)} in \d+\.\d\d s; 1 note\(s\) in the banner "
        r"above the timeline\.",
        status,
    ), status


def test_a_trace_named_anything_is_a_trace_when_dropped_or_given(
    qtbot, window, tmp_path, tutorial4_report
):
    path = write_gz(tmp_path / "profile.log", KINETO)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(path))])
    drop = QDropEvent(
        QPoint(300, 300), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    window.dropEvent(drop)
    wait_trace(qtbot, window)
    assert window.traces.opened is not None and window.traces.opened.files == [path]
    assert window.opened == [] and not window.loader.busy  # no report loader involved
    assert_no_box(window)
    # the command line: a window for the report, one for the traces
    assert _path_groups([tutorial4_report, path]) == [[tutorial4_report], [path]]


def test_tensorflow_threads_of_one_name_are_told_apart_by_process_and_id(qtbot, tmp_path):
    events = [meta("process_name", 1, name="/host:CPU")]
    for tid in (4101, 4102, 4103, 4104):
        events += [
            meta("thread_name", 1, tid, name="tf_Compute"),
            x("MatMul", tid, 10, 1, tid),
        ]
    events += [meta("thread_name", 1, 7, name="tf_data_iterator_get_next"), x("Next", 0, 5, 1, 7)]
    path = tmp_path / "host.trace.json.gz"
    write_gz(path, events)
    names = SystemTraceModel(open_trace(path)).lane_names()
    assert names == [
        "/host:CPU · tf_Compute 4101",
        "/host:CPU · tf_Compute 4102",
        "/host:CPU · tf_Compute 4103",
        "/host:CPU · tf_Compute 4104",
        "/host:CPU · tf_data_iterator_get_next",
    ]


def test_every_lane_of_a_recorded_trace_has_a_name(pvti_epochs_trace):
    trace = open_trace(pvti_epochs_trace)
    model = SystemTraceModel(trace)
    depths = trace.max_depth()
    expected = []
    for name in ("MainThread", "Prefetch"):  # by hand: the example's two threads
        t = [th.name for th in trace.threads].index(name)
        expected += [name] + [f"↳ depth {d}" for d in range(1, int(depths[t]) + 1)]
    assert model.lane_names() == expected
    assert all(model.lane_names())


@pytest.mark.parametrize(
    "names",
    [
        ["python3.10 · thread 2869224 (python3.10)", "↳ depth 1", "stream 7"],  # as reported
        ["python3.10 (CPU) · thread 2869224 (python3.10)", "↳ depth 1", "stream 7"],
        ["MainThread", "IPU 0"],
        [f"{'w' * k}{'i' * k} · tf_Compute {k}" for k in range(1, 40, 3)],
    ],
)
def test_lane_names_are_whole_when_the_column_is_as_wide_as_they_need(qtbot, names):
    axis = LaneAxis()
    axis.names = names
    axis.setWidth(axis.names_width())
    assert [axis.shown_name(i) for i in range(len(names))] == names


def test_a_recording_that_ended_says_so_in_the_banner(qtbot, tmp_path):
    view = SystemTraceView()
    qtbot.addWidget(view)
    since = time.time()
    writer = PvtiWriter(tmp_path, process_name="script.py", background=False)
    name, o = writer.path.name, writer.origin_monotonic_ns
    writer.add_span(11, "main", "epoch", o, o + 1000, 0)
    writer.add_span(11, "main", "step", o + 10, o + 500, 1)
    writer.flush()
    live = LiveTrace(view, tmp_path, since)
    qtbot.waitUntil(lambda: live.snapshots >= 1, timeout=10_000)
    assert view.banner.text() == f"Recording {name} live: 2 events so far."
    writer.add_instant(11, "main", "done", o + 1100, 0)
    writer.close()
    live.stop()
    assert not view.banner.isHidden()  # the page itself is not on screen here
    assert view.banner.text() == f"Recorded {name}: 3 events; the run has ended."


@pytest.mark.parametrize("record", [False, True])
def test_a_run_that_writes_a_gzip_trace_lands_on_it(qtbot, window, tmp_path, record):
    script = tmp_path / "profiled.py"
    script.write_text(  # as torch.profiler's export, into the run's folder
        "import gzip, json, os\n"
        "folder = json.loads(os.environ['PVTI_OPTIONS'])['directory']\n"
        "with gzip.open(os.path.join(folder, 'step.pt.trace.json.gz'), 'wt') as f:\n"
        f"    json.dump({{'traceEvents': {KINETO!r}}}, f)\n"
    )
    reports = tmp_path / "runs"
    run_through_dialog(qtbot, window, script, "", reports, record=record, pvti=True)
    wait_finished(qtbot, window)
    qtbot.waitUntil(lambda: window.traces.opened is not None, timeout=15_000)
    wait_trace(qtbot, window)
    assert window.traces.opened.files == [reports / "step.pt.trace.json.gz"]
    assert window.current_view() is window.traces.view
    assert window.traces.view.model.lane_names() == KINETO_LANES
    assert_no_box(window)


def test_screenshots_of_a_kineto_trace_with_flows(qtbot, window, tmp_path, screenshot_dir):
    path = write_gz(tmp_path / "kineto.json.gz", KINETO)
    view = open_trace_with_menu(qtbot, window, path)
    trace = view.model.trace
    view.select_event(next(i for i in range(len(trace)) if trace.label_of(i) == "kernel_b"))
    window.grab()
    assert window.grab().save(str(screenshot_dir / "system_trace_kineto_flows.png"))
    shutil.copy(path, tmp_path / "copy.json.gz")  # the file is left as it was
    assert (tmp_path / "copy.json.gz").read_bytes() == path.read_bytes()
