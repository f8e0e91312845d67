"""The fast path reads every field of plain X/i events right: escaped and unicode names,
int and float stamps, numeric-string stamps, ids as numbers or strings, any key order,
missing tids, categories and args -- checked against what the JSON says, event by event,
counted here without the importer; by the native kernel and by the typed path."""

from __future__ import annotations

import functools
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from profiler_core.formats.pvti import EventKind
from profiler_core.trace import chrome_fast, chrome_import, chrome_native, json_events
from profiler_core.trace.chrome_import import import_chrome_file
from tests.profiler_core.test_chrome_fast_path import assert_same_trace

NAMES = ['say "hi"', "back\\slash", "名前", "rocket 🚀", "line\nbreak", "tab\t", "\u2028", ""]
CATS = ["cpu_op", "kernel ü", 'q"uote']


def _events(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    evs = []
    for i in range(n):
        ph = rng.choice(["X", "X", "X", "i", "I"])
        ev: dict[str, Any] = {"ph": ph, "name": rng.choice(NAMES) + str(i % 3)}
        ev["ts"] = rng.choice([i * 4, i * 4 + 0.25, i * 4 + 0.5])  # int or float, exact in µs
        if i % 97 == 5:
            ev["ts"] = str(ev["ts"])  # a numeric string: read, by the per-event path
        if ph == "X":
            ev["dur"] = rng.choice([0, 3, 1.5])
        if rng.random() < 0.9:
            ev["cat"] = rng.choice(CATS)
        ev["pid"] = rng.choice([1, 2, "7", "host"])
        if rng.random() < 0.8:
            ev["tid"] = rng.choice([0, 1, "12", "worker"])
        if rng.random() < 0.3:
            ev["args"] = rng.choice([{}, {"k": i, "s": 'é"\\'}, {"nested": {"list": [1, 2.5]}}])
        keys = list(ev)
        rng.shuffle(keys)  # writers put the keys in any order
        evs.append({k: ev[k] for k in keys})
    return evs


def _ident(value: Any) -> Any:
    """A pid or tid as Chrome reads it: a numeric string is its number."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


def _expected_rows(evs: list[dict[str, Any]]) -> Counter:
    rows: Counter = Counter()
    for ev in evs:
        ts = float(ev["ts"]) if isinstance(ev["ts"], str) else ev["ts"]
        end = ts + ev.get("dur", 0)
        pid = _ident(ev["pid"])
        tid = _ident(ev.get("tid", ev["pid"]))  # no tid: the process's main track
        args = ev.get("args")
        text = json.dumps(args, separators=(",", ":")) if args else None
        kind = EventKind.SPAN if ev["ph"] == "X" else EventKind.INSTANT
        start_ns, end_ns = round(ts * 1000), round(end * 1000)  # µs -> ns; stamps near 0
        rows[(pid, f"Thread {tid}", ev["name"], ev.get("cat", ""), start_ns, end_ns, kind,
              text)] += 1  # fmt: skip
    return rows


def _trace_rows(trace: Any) -> Counter:
    rows: Counter = Counter()
    for i in range(len(trace)):
        thread = trace.threads[int(trace.thread[i])]
        rows[(trace.processes[thread.process].pid, thread.name,
              trace.labels[int(trace.label[i])], trace.channels[int(trace.channel[i])],
              int(trace.start_ns[i]), int(trace.end_ns[i]), int(trace.kind[i]),
              trace.args.get(i))] += 1  # fmt: skip
    return rows


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("chunk_bytes", [1 << 22, 5000])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_fast_path_reads_each_field_as_the_json_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int, ascii_only: bool,
    native: bool,
) -> None:  # fmt: skip
    evs = _events(3000, seed=chunk_bytes + ascii_only)
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": evs}, ensure_ascii=ascii_only), "utf-8")
    # small chunks: names, categories and tracks first met in a later chunk, too
    monkeypatch.setattr(
        chrome_import, "read_events", functools.partial(json_events.read_events,
                                                        chunk_bytes=chunk_bytes)
    )  # fmt: skip
    fast_runs = Counter()
    add_run = chrome_fast.add_run

    def counted(builder: Any, events: list, phases: list) -> bool:
        read = add_run(builder, events, phases)
        fast_runs[read] += len(events) if read else 1
        return read

    monkeypatch.setattr(chrome_fast, "add_run", counted)
    if native:
        add_native = chrome_native._add_run

        def counted_native(builder: Any, chunk: Any, a: int, b: int) -> None:
            fast_runs[True] += b - a
            add_native(builder, chunk, a, b)

        monkeypatch.setattr(chrome_native, "_add_run", counted_native)
    trace = import_chrome_file(path, native=native)
    # the fast path read most of them; the kernel takes only events whose names have no
    # escapes and whose pid and tid are numbers (few here): Builder.add reads the rest
    assert fast_runs[True] > (20 if native else 2500)
    assert _trace_rows(trace) == _expected_rows(evs)
    # labels and categories numbered in the order the file first names them
    assert list(trace.labels) == list(dict.fromkeys(ev["name"] for ev in evs))
    assert list(trace.channels) == list(dict.fromkeys(ev.get("cat", "") for ev in evs))
    assert trace.warnings == ()


def _fast_and_per_event(path: Path) -> tuple[Any, Any]:
    return import_chrome_file(path), import_chrome_file(path, fast=False)


def test_ends_past_2_53_are_the_exact_sums_as_the_per_event_path_makes_them(
    tmp_path: Path,
) -> None:
    base = 1_700_000_000_123_456_853  # ns epochs: floats hold them to 256 ns, and
    # float(base) + 300.0 (two roundings) misses float(base + 300) (one) by 256 ns
    assert float(base) + 300.0 != float(base + 300)
    evs = [
        {"ph": "X", "name": "a", "ts": base, "dur": 300, "pid": 1, "tid": 1},
        {"ph": "X", "name": "b", "ts": base + 2, "dur": 0.5, "pid": 1, "tid": 1},
        {"ph": "X", "name": "c", "ts": 3.25, "dur": 1, "pid": 2, "tid": 1},
    ]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(evs))
    fast, slow = _fast_and_per_event(path)
    assert_same_trace(fast, slow)
    # hand: one float stamp makes the columns float64; each end is its exact sum rounded once
    ends = sorted(int(x) for x in fast.end_ns)
    assert ends == sorted(int(float(e)) for e in (3.25 + 1, float(base + 300), (base + 2) + 0.5))


@pytest.mark.parametrize("ts", [-(2**63), 2**63 - 1, -9.3e18])
def test_stamps_out_of_range_at_int64s_edges_are_skipped_as_one_by_one(
    tmp_path: Path, ts: float
) -> None:
    evs = [{"ph": "X", "name": "a", "ts": 5, "dur": 1, "pid": 1, "tid": 1},
           {"ph": "X", "name": "edge", "ts": ts, "dur": 1, "pid": 1, "tid": 1}]  # fmt: skip
    path = tmp_path / "edge.json"
    path.write_text(json.dumps(evs))
    fast, slow = _fast_and_per_event(path)
    assert_same_trace(fast, slow)
    assert fast.labels == ("a",)
    assert fast.warnings == ("edge.json: 1 event(s) skipped (1 'ts' is out of range)",)


def test_phases_of_any_json_type_beside_plain_events(tmp_path: Path) -> None:
    odd = [["X"], {"X": 1}, 1, True, None, "", "Xi"]  # a list and an object are unhashable
    evs = [{"ph": "X", "name": f"s{i}", "ts": i, "dur": 1, "pid": 1, "tid": 1} for i in range(3)]
    evs += [{"ph": ph, "name": "odd", "ts": 9, "dur": 1, "pid": 1, "tid": 1} for ph in odd]
    evs += [{"ph": "i", "name": "last", "ts": 10, "pid": 1, "tid": 1}]
    path = tmp_path / "phases.json"
    path.write_text(json.dumps(evs))
    fast, slow = _fast_and_per_event(path)
    assert_same_trace(fast, slow)
    # hand: "Xi" is read by its first letter (a span); the 6 others have no readable phase
    assert sorted(fast.labels) == ["last", "odd", "s0", "s1", "s2"]
    assert fast.warnings == ("phases.json: 6 event(s) skipped (6 no 'ph')",)


@pytest.mark.parametrize("dur", [2**63, 9.21e18])
def test_a_duration_whose_end_passes_int64_is_skipped_not_a_crash(tmp_path: Path, dur) -> None:
    evs = [{"ph": "X", "name": "a", "ts": 5, "dur": 1, "pid": 1, "tid": 1},
           {"ph": "X", "name": "endless", "ts": 0, "dur": dur, "pid": 1, "tid": 1}]  # fmt: skip
    path = tmp_path / "endless.json"
    path.write_text(json.dumps(evs))
    fast, slow = _fast_and_per_event(path)
    assert_same_trace(fast, slow)
    assert fast.labels == ("a",)
    assert fast.warnings == ("endless.json: 1 event(s) skipped (1 'dur' is out of range)",)
