"""Chrome Trace Event JSON: export for Perfetto, import (object and array forms), bad input."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import export_chrome, import_chrome_file, open_trace, trace_to_chrome
from profiler_core.trace.json_guard import max_nesting
from tests.profiler_core.pvti_samples import IPU_STEPS, LOSS, MAIN_EVENTS, MAIN_TID


def write_json(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_export_has_x_spans_instants_counters_and_names_in_microseconds(
    small_pvti: Path,
) -> None:
    doc = trace_to_chrome(open_trace(small_pvti))
    assert doc["displayTimeUnit"] == "ns"
    events = doc["traceEvents"]
    spans = sorted((e["name"], e["ts"], e["dur"]) for e in events if e["ph"] == "X")
    expected = [(lab, s / 1000, (e - s) / 1000) for lab, s, e, _, k in MAIN_EVENTS if k == "span"]
    expected += [(lab, s / 1000, (e - s) / 1000) for lab, s, e in IPU_STEPS]
    assert spans == sorted(expected)
    (instant,) = [e for e in events if e["ph"] == "i"]
    assert (instant["name"], instant["ts"], instant["s"]) == ("tick", 3.0, "t")
    counters = [(e["name"], e["ts"], e["args"]) for e in events if e["ph"] == "C"]
    assert counters == [("Loss", t / 1000, {"train": v}) for t, v in LOSS]
    names = {(e["name"], e["args"]["name"]) for e in events if e["ph"] == "M"}
    assert ("thread_name", "main") in names and ("thread_name", "IPU 0") in names
    assert ("process_name", "small") in names
    main = next(e for e in events if e.get("name") == "epoch")
    assert main["tid"] == MAIN_TID and main["cat"] == "Training"
    assert next(e for e in events if e.get("ts") == 5.0 and e["ph"] == "X")["args"] == {"n": 2}


def test_export_then_import_keeps_every_label_start_and_duration(
    small_pvti: Path, tmp_path: Path
) -> None:
    original = open_trace(small_pvti)
    back = import_chrome_file(export_chrome(original, tmp_path / "t.json"))

    def rows(trace):
        return sorted(
            (trace.label_of(i), trace.threads[trace.thread[i]].name,
             int(trace.start_ns[i]), int(trace.end_ns[i] - trace.start_ns[i]))
            for i in range(len(trace))
        )  # fmt: skip

    got, want = rows(back), rows(original)
    assert [r[:2] for r in got] == [r[:2] for r in want]
    assert np.all(np.abs(np.array([r[2:] for r in got]) - [r[2:] for r in want]) < 1000)
    assert back.origin_wall_ns == original.origin_wall_ns
    assert back.series["Loss"]["train"][1].tolist() == [v for _, v in LOSS]
    assert [t.kind for t in back.threads] == [t.kind for t in original.threads]
    assert back.depth.tolist() == original.depth.tolist()


def test_import_reads_the_bare_array_form_with_b_e_pairs_and_nesting(tmp_path: Path) -> None:
    events = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}},
        {"ph": "B", "name": "outer", "cat": "py", "ts": 10, "pid": 1, "tid": 2},
        {"ph": "X", "name": "inner", "ts": 11.5, "dur": 2, "pid": 1, "tid": 2},
        {"ph": "I", "name": "mark", "ts": 12, "pid": 1, "tid": 2, "s": "g"},
        {"ph": "E", "ts": 20, "pid": 1, "tid": 2},
        {"ph": "C", "name": "mem", "ts": 15, "pid": 1, "args": {"used": 3, "free": 5}},
        {"ph": "s", "name": "a flow", "ts": 1, "pid": 1, "tid": 2, "id": 1},
    ]
    trace = import_chrome_file(write_json(tmp_path / "torch.json", events))
    got = [
        (trace.label_of(i), int(trace.start_ns[i]), int(trace.end_ns[i]), int(trace.depth[i]))
        for i in range(len(trace))
    ]
    # "s": "g" is a global instant: its row comes first, above every process (as Perfetto)
    assert got == [("mark", 12_000, 12_000, 0), ("outer", 10_000, 20_000, 0),
                   ("inner", 11_500, 13_500, 1)]  # fmt: skip
    assert trace.kind.tolist() == [EventKind.INSTANT, EventKind.SPAN, EventKind.SPAN]
    assert trace.threads[0].kind == "global" and trace.thread[0] == 0
    assert trace.threads[1].name == "worker" and trace.threads[1].os_tid == 2
    assert trace.series["mem"]["used"][1].tolist() == [3.0]
    assert trace.series["mem"]["free"][0].tolist() == [15_000]
    assert trace.channels[trace.channel[1]] == "py"


def test_import_reads_the_object_form(tmp_path: Path) -> None:
    doc = {"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]}
    assert len(import_chrome_file(write_json(tmp_path / "t.json", doc))) == 1


GOOD = {"ph": "X", "name": "good", "ts": 1, "dur": 1, "pid": 1, "tid": 1}


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"name": "a", "ts": 1}, "1 no 'ph'"),
        ({"ph": "X", "name": "a", "ts": 1, "pid": 1, "tid": 1}, "1 no 'dur'"),
        ({"ph": "X", "name": "a", "ts": 1, "dur": -5, "pid": 1, "tid": 1}, "1 negative 'dur'"),
        ({"ph": "X", "name": "a", "ts": "soon", "dur": 1, "pid": 1, "tid": 1},
         "1 'ts' is not a number"),
        ({"ph": "i", "name": "a", "ts": 1, "pid": [1], "tid": 1}, "1 'pid' is not an id"),
        ({"ph": "E", "ts": 1, "pid": 1, "tid": 1}, "1 'E' with no 'B'"),
        ({"ph": "X", "name": "a", "ts": 1e300, "dur": 1, "pid": 1, "tid": 1},
         "1 'ts' is out of range"),
        (17, "1 not an object"),
    ],
)  # fmt: skip
def test_one_bad_event_is_skipped_and_counted_and_the_rest_is_read(
    tmp_path: Path, event: object, reason: str
) -> None:
    trace = import_chrome_file(write_json(tmp_path / "bad.json", [GOOD, event]))
    assert [trace.label_of(i) for i in range(len(trace))] == ["good"]
    assert trace.warnings == (f"bad.json: 1 event(s) skipped ({reason})",)


def test_a_counter_value_that_is_not_a_number_is_counted_and_its_neighbours_kept(
    tmp_path: Path,
) -> None:
    event = {"ph": "C", "name": "c", "ts": 1, "pid": 1, "args": {"v": "high", "w": 2}}
    trace = import_chrome_file(write_json(tmp_path / "bad.json", [GOOD, event]))
    assert trace.series["c"]["w"][1].tolist() == [2.0] and "v" not in trace.series["c"]
    assert trace.warnings == (
        "bad.json: 1 event(s) skipped (1 counter values that are not numbers)",
    )


@pytest.mark.parametrize(
    ("doc", "reason"),
    [
        ([{"name": "a", "ts": 1}], "no trace event could be read \\(1 no 'ph'\\)"),
        ([17], "no trace event could be read \\(1 not an object\\)"),
        ({"events": []}, "no 'traceEvents' array"),
        (42, "a Chrome trace starts with"),
    ],
)  # fmt: skip
def test_a_file_with_nothing_readable_names_the_file_and_the_problem(
    tmp_path: Path, doc: object, reason: str
) -> None:
    path = write_json(tmp_path / "bad.json", doc)
    with pytest.raises(ReportError, match=reason) as err:
        import_chrome_file(path)
    assert "bad.json" in str(err.value)


def test_a_b_without_e_is_an_open_span_to_the_end_of_the_trace(tmp_path: Path) -> None:
    events = [{"ph": "B", "name": "open", "ts": 1, "pid": 1, "tid": 1}, GOOD | {"ts": 5}]
    trace = import_chrome_file(write_json(tmp_path / "t.json", events))
    row = trace.labels.index("open")
    i = int(np.flatnonzero(trace.label == row)[0])
    assert trace.kind[i] == EventKind.OPEN and trace.end_ns[i] == 6_000
    assert trace.warnings == ("t.json: 1 span(s) did not finish (no end event)",)


def test_text_that_is_not_json_skips_the_broken_event(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [{"ph": "i", "name": "a", "ts": 1, "pid": 1}, {"ph": "X",]}')
    trace = import_chrome_file(path)
    assert len(trace) == 1
    assert trace.warnings == ("t.json: 1 event(s) skipped (1 the file ends inside an event)",)


def test_absurd_nesting_is_refused_without_parsing(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 5_000_000)
    with pytest.raises(ReportError, match="no trace event could be read") as err:
        open_trace(path)
    assert "deep.json" in str(err.value)


def test_an_event_nested_too_deeply_is_skipped_unparsed(tmp_path: Path) -> None:
    deep = '{"ph":"i","name":"deep","ts":1,"pid":1,"args":' + '{"a":' * 300 + "1" + "}" * 301
    path = tmp_path / "t.json"
    path.write_text("[" + json.dumps(GOOD) + "," + deep + "]")
    trace = import_chrome_file(path)
    assert trace.labels == ("good",)
    assert trace.warnings == ("t.json: 1 event(s) skipped (1 nested deeper than 200 levels)",)


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    label = "[" * 500 + '\\"' + "{" * 500
    doc = [{"ph": "X", "name": label, "ts": 0, "dur": 1, "pid": 1, "tid": 1}]
    trace = import_chrome_file(write_json(tmp_path / "t.json", doc))
    assert trace.labels == (json.loads(json.dumps(label)),)


@pytest.mark.parametrize(
    ("text", "depth"),
    [("[]", 1), ('{"a": [[{}]]}', 4), ('["[[[", "\\\\", [["]"]]]', 3), ('"\\"[["', 0)],
)
def test_max_nesting_counts_only_structure(text: str, depth: int) -> None:
    json.loads(text)
    assert max_nesting(text.encode()) == depth


def test_a_file_over_the_size_limit_is_refused_with_the_limit(tmp_path: Path) -> None:
    doc = [{"ph": "i", "name": "x" * 100, "ts": i, "pid": 1, "tid": 1} for i in range(20_000)]
    path = write_json(tmp_path / "big.json", doc)
    with pytest.raises(ReportError, match=re.escape("over the 1 MiB limit")):
        open_trace(path, max_json_bytes=2**20)
    assert len(open_trace(path)) == 20_000


@pytest.mark.parametrize("chunk", [1, 3, 1 << 16])
def test_the_streamed_export_is_the_documents_json_across_chunk_boundaries(
    small_pvti: Path, tmp_path: Path, monkeypatch, chunk: int
) -> None:
    """export_chrome writes chunk by chunk; the text is exactly json.dumps of the document
    (instants, open spans, args, counters, names needing escapes included)."""
    import profiler_core.trace.chrome as chrome

    monkeypatch.setattr(chrome, "CHUNK_EVENTS", chunk)
    trace = open_trace(small_pvti)
    labels = ('quote " and \\ and é\n', *trace.labels[1:])  # every escape JSON has
    trace = dataclasses.replace(trace, labels=labels)
    kinds = set(trace.kind.tolist())
    assert {EventKind.SPAN, EventKind.INSTANT} <= kinds and trace.args and trace.series
    path = export_chrome(trace, tmp_path / "t.json")
    expected = json.dumps(trace_to_chrome(trace), separators=(",", ":"))
    assert path.read_text(encoding="utf-8") == expected


def test_an_empty_trace_exports_valid_json(tmp_path: Path) -> None:
    from profiler_core.trace.build import build_trace

    fields = {"start_ns": np.int64, "end_ns": np.int64, "thread": np.int32,
              "channel": np.int32, "label": np.int32, "kind": np.uint8, "depth": np.int32}  # fmt: skip
    empty = build_trace(
        {k: np.zeros(0, t) for k, t in fields.items()},
        origin_wall_ns=0, labels=[], channels=[], threads=[], processes=[],
    )  # fmt: skip
    path = export_chrome(empty, tmp_path / "empty.json")
    assert json.loads(path.read_text()) == trace_to_chrome(empty)
    assert json.loads(path.read_text())["traceEvents"] == []
