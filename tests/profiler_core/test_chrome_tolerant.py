"""Chrome / Perfetto JSON traces from any tool open as Perfetto opens them: one small
hand-written trace per behaviour, checked against counts written by hand."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import export_chrome, import_chrome_file, json_events
from profiler_core.trace.build import build_trace
from profiler_core.trace.model import Process, Thread


def write(tmp_path: Path, text: str, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def x(name: str, ts: float, dur: float, tid: int = 1, pid: int = 1, **more) -> dict:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, **more}


def rows(trace) -> list[tuple[str, str, int, int]]:
    """(track, label, start ns, end ns) of every event, in the trace's order."""
    return [
        (trace.threads[trace.thread[i]].name, trace.label_of(i), int(trace.start_ns[i]),
         int(trace.end_ns[i]))
        for i in range(len(trace))
    ]  # fmt: skip


def test_a_file_cut_short_reads_every_whole_event(tmp_path):
    text = json.dumps([x("a", 1, 1), x("b", 3, 1)])[:-1] + "," + '{"ph": "X", "na'
    trace = import_chrome_file(write(tmp_path, text))
    assert [r[1] for r in rows(trace)] == ["a", "b"]
    assert trace.warnings == ("t.json: 1 event(s) skipped (1 the file ends inside an event)",)


def test_a_missing_final_bracket_trailing_commas_and_a_trailing_empty_object(tmp_path):
    body = ",".join(json.dumps(e) for e in (x("a", 1, 1), x("b", 3, 1)))
    for text in (f"[{body}", f"[{body},]", f"[{body},,\n]", f"[{body},{{}}]"):
        trace = import_chrome_file(write(tmp_path, text))
        assert [r[1] for r in rows(trace)] == ["a", "b"], text
        assert all("skipped" not in w for w in trace.warnings), text


def test_gzip_traces_open_as_the_same_trace_and_a_bomb_is_refused(tmp_path):
    doc = {"traceEvents": [x("a", 1, 1), x("b", 3, 1)]}
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    assert rows(import_chrome_file(path)) == rows(
        import_chrome_file(write(tmp_path, json.dumps(doc)))
    )
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"[" + b" " * (64 << 20) + b"]"))
    with pytest.raises(ReportError, match="expands more than 200x: refused as a decompression"):
        import_chrome_file(bomb)


def test_numbers_given_as_strings_and_ph_read_from_its_first_letter(tmp_path):
    events = [
        {"ph": "X", "name": "a", "ts": "10.5", "dur": "2", "pid": "7", "tid": "8"},
        {"ph": "Xcomplete", "name": "b", "ts": 20, "dur": 1, "pid": 7, "tid": 8},
        {"ph": "C", "name": "mem", "ts": "11", "pid": 7, "args": {"used": "42.5"}},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert rows(trace) == [("Thread 8", "a", 10_500, 12_500), ("Thread 8", "b", 20_000, 21_000)]
    assert trace.threads[0].os_tid == 8 and trace.processes[0].pid == 7
    assert trace.series["mem"]["used"][1].tolist() == [42.5]
    assert trace.series["mem"]["used"][0].tolist() == [11_000]


def test_kineto_epoch_microseconds_start_the_trace_at_its_first_event(tmp_path):
    epoch_us = 1_700_000_000_000_000  # PyTorch's profiler writes µs since 1970
    events = [x("a", epoch_us + 5, 2), x("b", epoch_us + 10, 1)]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert trace.origin_wall_ns == (epoch_us + 5) * 1000
    assert rows(trace) == [("Thread 1", "a", 0, 2_000), ("Thread 1", "b", 5_000, 6_000)]


def test_epoch_nanoseconds_are_read_as_nanoseconds(tmp_path):
    epoch_ns = 1_700_000_000_000_000_000
    events = [x("a", epoch_ns + 5_000, 2_000), x("b", epoch_ns + 10_000, 1_000)]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert rows(trace) == [("Thread 1", "a", 0, 2_000), ("Thread 1", "b", 5_000, 6_000)]


def test_string_pids_and_a_missing_tid_which_is_the_processs_main_track(tmp_path):
    events = [
        {"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": "browser"},
        {"ph": "X", "name": "b", "ts": 3, "dur": 1, "pid": "browser", "tid": "browser"},
        {"ph": "M", "name": "process_name", "pid": "browser", "args": {"name": "Browser"}},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert len(trace.threads) == 1 and trace.thread.tolist() == [0, 0]
    assert trace.processes[0].pid == "browser" and trace.processes[0].name == "Browser"


def test_nestable_async_spans_get_a_track_per_id_and_nest_there(tmp_path):
    events = [
        {"ph": "b", "name": "load", "cat": "net", "id": 1, "ts": 0, "pid": 1},
        {"ph": "b", "name": "parse", "cat": "net", "id": 1, "ts": 2, "pid": 1},
        {"ph": "n", "name": "chunk", "cat": "net", "id": 1, "ts": 3, "pid": 1},
        {"ph": "e", "name": "parse", "cat": "net", "id": 1, "ts": 5, "pid": 1},
        {"ph": "e", "name": "load", "cat": "net", "id": 1, "ts": 9, "pid": 1},
        {"ph": "b", "name": "load", "cat": "net", "id2": {"local": "0x2"}, "ts": 1, "pid": 1},
        {"ph": "e", "name": "load", "cat": "net", "id2": {"local": "0x2"}, "ts": 4, "pid": 1},
        {"ph": "e", "name": "orphan", "cat": "net", "id": 3, "ts": 4, "pid": 1},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert [t.kind for t in trace.threads] == ["async", "async", "async"]
    got = sorted((trace.threads[trace.thread[i]].name, *r[1:], int(trace.depth[i]))
                 for i, r in enumerate(rows(trace)))  # fmt: skip
    assert got == [
        ("load (0x2)", "load", 1_000, 4_000, 0),
        ("load (1)", "chunk", 3_000, 3_000, 2),
        ("load (1)", "load", 0, 9_000, 0),
        ("load (1)", "parse", 2_000, 5_000, 1),
    ]
    assert trace.warnings == ("t.json: 1 event(s) skipped (1 async 'e' with no begin)",)


def test_legacy_async_start_step_finish(tmp_path):
    events = [
        {"ph": "S", "name": "req", "id": "r1", "ts": 0, "pid": 1},
        {"ph": "T", "name": "req", "id": "r1", "ts": 4, "pid": 1, "args": {"step": "sent"}},
        {"ph": "F", "name": "req", "id": "r1", "ts": 10, "pid": 1},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert rows(trace) == [("req (r1)", "req", 0, 10_000), ("req (r1)", "req", 4_000, 4_000)]
    assert trace.kind.tolist() == [EventKind.SPAN, EventKind.INSTANT]


def test_flow_events_bind_to_their_spans_and_chain(tmp_path):
    events = [
        x("send", 0, 10, tid=1),
        x("relay", 20, 10, tid=2),
        x("receive", 40, 10, tid=3),
        {"ph": "s", "id": 5, "cat": "ipc", "name": "msg", "ts": 5, "pid": 1, "tid": 1},
        {"ph": "t", "id": 5, "cat": "ipc", "name": "msg", "ts": 25, "pid": 1, "tid": 2},
        # "f" binds to the next span to begin on its thread unless "bp": "e"
        {"ph": "f", "id": 5, "cat": "ipc", "name": "msg", "ts": 35, "pid": 1, "tid": 3},
        {"ph": "f", "id": 9, "cat": "ipc", "name": "lost", "ts": -5, "pid": 1, "tid": 1},
        {"ph": "s", "id": 10, "cat": "ipc", "name": "nowhere", "ts": 15, "pid": 1, "tid": 1},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    arrows = [(trace.label_of(a), trace.label_of(b)) for a, b in trace.flows.tolist()]
    assert arrows == [("send", "relay"), ("relay", "receive")]
    assert trace.warnings == (
        "t.json: 2 event(s) skipped (1 flow events with no span to bind to, "
        "1 flow steps or ends with no start)",
    )


def test_bind_id_flows_on_the_spans_themselves(tmp_path):
    events = [
        x("producer", 0, 5, tid=1, bind_id=77, flow_out=True),
        x("consumer", 10, 5, tid=2, bind_id=77, flow_in=True),
        x("unrelated", 20, 5, tid=2),
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert [(trace.label_of(a), trace.label_of(b)) for a, b in trace.flows.tolist()] == [
        ("producer", "consumer")
    ]


def test_counters_are_kept_apart_per_process_and_id(tmp_path):
    events = [
        {"ph": "C", "name": "mem", "ts": 1, "pid": 1, "args": {"v": 1}},
        {"ph": "C", "name": "mem", "ts": 1, "pid": 2, "args": {"v": 2}},
        {"ph": "C", "name": "q", "id": 4, "ts": 2, "pid": 1, "args": {"len": 3}},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert {g: {k: v[1].tolist() for k, v in s.items()} for g, s in trace.series.items()} == {
        "mem (pid 1)": {"v": [1.0]},
        "mem (pid 2)": {"v": [2.0]},
        "q 4": {"len": [3.0]},
    }


def test_instants_go_to_their_scopes_row_and_marks_are_instants(tmp_path):
    events = [
        x("work", 0, 10),
        {"ph": "i", "name": "on thread", "ts": 1, "pid": 1, "tid": 1},
        {"ph": "i", "name": "on process", "ts": 2, "pid": 1, "tid": 1, "s": "p"},
        {"ph": "I", "name": "everywhere", "ts": 3, "pid": 1, "tid": 1, "s": "g"},
        {"ph": "R", "name": "navigationStart", "ts": 4, "pid": 1, "tid": 1},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    where = {trace.label_of(i): trace.threads[trace.thread[i]].kind for i in range(len(trace))}
    assert where == {"work": "thread", "on thread": "thread", "on process": "process",
                     "everywhere": "global", "navigationStart": "global"}  # fmt: skip
    assert int(trace.is_instant().sum()) == 4


def test_names_and_sort_indexes_order_the_tracks(tmp_path):
    events = [
        x("a", 0, 1, tid=1, pid=1),
        x("b", 0, 1, tid=2, pid=1),
        x("c", 0, 1, tid=1, pid=2),
        {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "GPU"}},
        {"ph": "M", "name": "process_sort_index", "pid": 2, "args": {"sort_index": -1}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "io"}},
        {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": -5}},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert [p.name for p in trace.processes] == ["GPU", "Process 1"]
    assert [(trace.processes[t.process].name, t.name) for t in trace.threads] == [
        ("GPU", "Thread 1"),
        ("Process 1", "io"),
        ("Process 1", "Thread 1"),
    ]


def test_kinds_with_no_place_are_counted_by_kind(tmp_path):
    events = [
        x("a", 0, 1),
        {"ph": "N", "name": "obj", "id": 1, "ts": 0, "pid": 1},
        {"ph": "O", "name": "obj", "id": 1, "ts": 1, "pid": 1, "args": {"snapshot": {}}},
        {"ph": "D", "name": "obj", "id": 1, "ts": 2, "pid": 1},
        {"ph": "P", "name": "sample", "ts": 2, "pid": 1, "tid": 1},
        {"ph": "Q", "name": "?", "ts": 2, "pid": 1, "tid": 1},
    ]
    trace = import_chrome_file(write(tmp_path, json.dumps(events)))
    assert trace.warnings == (
        "t.json: not shown: 3 object events (N/O/D), 1 samples (P), 1 events of unknown phase 'Q'",
    )


def strict_json(text: str) -> object:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_export_is_strict_json_and_a_round_trip_keeps_processes_spans_counters_and_flows(
    tmp_path,
):
    columns = {
        "start_ns": np.array([0, 2_000, 10_000], np.int64),
        "end_ns": np.array([5_000, 3_000, 12_000], np.int64),
        "depth": np.array([0, 1, 0], np.int32),
        "thread": np.array([0, 0, 1], np.int32),
        "channel": np.zeros(3, np.int32),
        "label": np.array([0, 1, 2], np.int32),
        "kind": np.full(3, EventKind.SPAN, np.uint8),
    }
    loss = (np.array([0, 1_000, 2_000, 3_000], np.int64), np.array([1.0, np.nan, np.inf, 0.5]))
    trace = build_trace(
        columns,
        origin_wall_ns=0,
        labels=["outer", "inner", "far"],
        channels=["c"],
        threads=[Thread("main", 0, 1, "thread"), Thread("worker", 1, 2, "thread")],
        processes=[Process("browser", "", "Browser", 0), Process(9, "", "GPU", 0)],
        series={"Loss": {"train": loss}},
        args={1: '{"x": NaN, "y": 2}'},
        flows=np.array([[1, 2]]),
    )
    path = export_chrome(trace, tmp_path / "out.json")
    doc = strict_json(path.read_text())
    assert all("cat" in ev for ev in doc["traceEvents"])
    assert doc["otherData"]["pvti_series_gaps"] == 2
    back = import_chrome_file(path)
    assert rows(back) == rows(trace)
    assert [(p.pid, p.name) for p in back.processes] == [("browser", "Browser"), (9, "GPU")]
    assert [(back.label_of(a), back.label_of(b)) for a, b in back.flows.tolist()] == [
        ("inner", "far")
    ]
    t, v = back.series["Loss"]["train"]
    assert t.tolist() == [0, 3_000] and v.tolist() == [1.0, 0.5]  # the gaps are gaps
    assert json.loads(back.args[1]) == {"x": None, "y": 2}
    assert back.warnings == ("out.json: 2 series value(s) were not finite when exported (gaps)",)


def test_a_gzip_trace_expanding_past_one_read_is_read_whole(tmp_path: Path) -> None:
    # ~1.2 MB of text in ~20 kB of gzip: each raw read inflates to more than a chunk, and
    # what the inflater keeps back must still be read once the raw file has no more
    evs = [{"ph": "X", "name": "a", "ts": i, "dur": 1, "pid": 1, "tid": 1,
            "args": {"pad": " " * 400}} for i in range(2500)]  # fmt: skip
    path = tmp_path / "padded.json.gz"
    path.write_bytes(gzip.compress(json.dumps(evs).encode()))
    stream = json_events.EventStream(path)
    read = [ev for chunk in json_events.read_events(path, stream, chunk_bytes=1 << 16)
            for ev in chunk]  # fmt: skip
    assert len(read) == 2500 and not stream.skipped and not stream.notes
