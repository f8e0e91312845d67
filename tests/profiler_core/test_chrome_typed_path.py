"""The typed fast path (a chunk decoded by msgspec into structs, args kept as the file
writes them) gives exactly the Trace the per-event path gives, on generated traces with
every field shape and layout; a chunk msgspec would read otherwise than ``json.loads``
is read as dicts, and args are the text ``json.dumps`` makes of the parsed object. The
native kernel is turned off here: the typed path reads every chunk the kernel refuses
(``test_chrome_native_path.py`` compares the kernel with it)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiler_core.trace import chrome_fast, chrome_import, json_events, json_typed
from profiler_core.trace.event_args import EventArgs
from profiler_core.trace.model import Trace
from tests.profiler_core.test_chrome_fast_path import assert_same_trace

NAMES = ["aten::mm", "ünïcödé ✓", "kernel<float, 4>(float*)", "名前", 'a "quote"', "back\\slash",
         "tab\tnew\nline", "", "\u2028"]  # fmt: skip
ARGS = [None, {}, {"a": 1}, {"External id": 12, "grid": [1, 2.50, "x"], "k": {"é": None}},
        {"big": 10**25, "neg": -0.0, "exp": 1.5e300, "t": True}, {"a": 1, "pvti": "no"}]  # fmt: skip


def _events(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """Kineto- and Chrome-like events with every field shape the fast path meets."""
    evs: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python ✓"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": "7", "args": {"name": "stream"}},
        {"ph": "M", "name": "process_sort_index", "pid": "proc", "args": {"sort_index": -1}},
    ]
    t = 1_700_000_000_000_000.0 if rng.random() < 0.5 else 0
    for i in range(n):
        t += rng.choice([1, 2.5, 0.125, 3])
        ev: dict[str, Any] = {"name": rng.choice(NAMES), "pid": rng.choice([1, 2, "3", "proc"]),
                              "ts": rng.choice([t, round(t, 3), int(t)])}  # fmt: skip
        if rng.random() < 0.8:
            ev["tid"] = rng.choice([1, 2, "7", "gpu stream 7"])
        if rng.random() < 0.7:
            ev["cat"] = rng.choice(["cpu_op", "kernel", "ç"])
        roll = rng.random()
        if roll < 0.55:
            ev["ph"] = "X"
            if rng.random() < 0.97:  # else: no dur, skipped and counted
                ev["dur"] = rng.choice([0, 1, 2.25, 10])
        elif roll < 0.65:
            ev["ph"] = rng.choice(["i", "I"])
            if rng.random() < 0.3:
                ev["s"] = rng.choice(["t", "t", "p", "g"])
        elif roll < 0.75:  # a B/E pair, args on either
            ev["ph"] = "B"
            evs.append(ev)
            ev = {"ph": "E", "pid": ev["pid"], "tid": ev.get("tid", ev["pid"]), "ts": t + 1}
        elif roll < 0.9:  # a flow point: ids as ints or strings
            ev["ph"] = rng.choice(["s", "f", "t"])
            ev["id"] = rng.choice([i // 2, str(i // 2), "0x1f"])
            ev["cat"] = "ac2g"
            if rng.random() < 0.5:
                ev["bp"] = "e"
        elif roll < 0.95:
            ev.update(ph="C", args={"used": rng.randint(0, 9)})
        else:
            ev.update(ph=rng.choice(["b", "e", "n"]), id=i % 3, cat="async")
        if "args" not in ev and rng.random() < 0.6:
            args = rng.choice(ARGS)
            if args is not None or rng.random() < 0.5:  # "args": null beside no args
                ev["args"] = args
        evs.append(ev)
    return evs


def _write(path: Path, evs: list, layout: str) -> None:
    if layout == "compact":
        text = json.dumps({"traceEvents": evs}, separators=(",", ":"), ensure_ascii=False)
    elif layout == "kineto":  # an event over several indented lines, args too
        text = json.dumps({"schemaVersion": 1, "traceEvents": evs}, indent=2)
    else:  # one event a line, spaces after the separators
        text = "[\n" + ",\n".join(json.dumps(ev, ensure_ascii=False) for ev in evs) + "\n]"
    path.write_text(text, "utf-8")


def _typed_chunks(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts how many chunks msgspec decoded (True) and refused (False)."""
    seen: Counter = Counter()
    real = json_events.decode

    def counted(text: bytes) -> list | None:
        out = real(text)
        seen[out is not None] += 1
        return out

    monkeypatch.setattr(json_events, "decode", counted)
    return seen


def _both(path: Path) -> tuple[Trace, Trace]:
    fast = chrome_import.import_chrome_file(path, native=False)
    return fast, chrome_import.import_chrome_file(path, fast=False)


@pytest.mark.parametrize("layout", ["compact", "kineto", "lines"])
@pytest.mark.parametrize("chunk_bytes", [3000, 1 << 18])
def test_typed_path_equals_per_event_path_on_generated_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, chunk_bytes: int
) -> None:
    evs = _events(random.Random(f"{layout}{chunk_bytes}"), 2500)
    path = tmp_path / "t.json"
    _write(path, evs, layout)
    monkeypatch.setattr(chrome_import, "read_events", _chunked(chunk_bytes))
    seen = _typed_chunks(monkeypatch)
    runs: Counter = Counter()
    add_run = chrome_fast.add_run

    def counted(builder: Any, events: list, phases: list) -> bool:
        read = add_run(builder, events, phases)
        runs[type(events[0]).__name__, read] += len(events)
        return read

    monkeypatch.setattr(chrome_fast, "add_run", counted)
    fast, slow = _both(path)
    assert seen[True] >= 1 and seen[False] == 0  # every chunk decoded into structs
    assert runs["TraceEvent", True] > 1000  # most plain events read from the structs
    assert_same_trace(fast, slow)
    assert len(fast) > 1500 and len(fast.flows) > 0 and len(fast.args) > 500
    # the independent source: each plain span's args as json.dumps writes the object
    expected = Counter(json.dumps(ev["args"], separators=(",", ":")) for ev in evs
                       if ev.get("ph") == "X" and "dur" in ev and ev.get("args"))  # fmt: skip
    assert expected and expected - Counter(fast.args.values()) == Counter()


def _chunked(chunk_bytes: int) -> Any:
    def read(*args: Any, **kwargs: Any) -> Any:
        return json_events.read_events(*args, chunk_bytes=chunk_bytes, **kwargs)

    return read


PLAIN = '{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":1}}'


@pytest.mark.parametrize(
    "odd",
    [
        '{"ph":"X","name":"nan","ts":NaN,"dur":1,"pid":1,"tid":1}',
        '{"ph":"X","name":"inf args","ts":3,"dur":1,"pid":1,"tid":1,"args":{"v":Infinity}}',
        '{"ph":"X","name":"lone","ts":3,"dur":1,"pid":1,"tid":1,"x":"\\ud800"}',
        '{"ph":"X","name":"bool pid","ts":3,"dur":1,"pid":true,"tid":1}',
        '{"ph":"X","name":"null tid","ts":3,"dur":1,"pid":1,"tid":null}',
        '{"ph":"X","name":"float tid","ts":3,"dur":1,"pid":1,"tid":1.0}',
        '{"ph":"X","name":5,"ts":3,"dur":1,"pid":1,"tid":1}',
        '{"ph":"X","name":"huge","ts":3,"dur":1e400,"pid":1,"tid":1}',
        '{"ph":"i","name":"float id","ts":3,"pid":1,"tid":1,"id":1.5}',
    ],
)
def test_a_chunk_msgspec_would_read_otherwise_is_read_as_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: str
) -> None:
    path = tmp_path / "odd.json"
    path.write_text(f"[{PLAIN},{odd},{PLAIN}]")
    seen = _typed_chunks(monkeypatch)
    fast, slow = _both(path)
    assert seen == Counter({False: 1})
    assert_same_trace(fast, slow)


def test_text_that_is_not_utf8_where_msgspec_does_not_look_is_read_as_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # msgspec skips the unknown key's value and keeps args raw without checking their UTF-8
    # (json.loads refuses both): the events are skipped as "not UTF-8 text", as one by one
    bad = [b'{"ph":"X","name":"a","ts":2,"dur":1,"pid":1,"tid":1,"zz":"\xe9"}',
           b'{"ph":"X","name":"b","ts":3,"dur":1,"pid":1,"tid":1,"args":{"v":"\xc0\xaf"}}']  # fmt: skip
    path = tmp_path / "latin1.json"
    path.write_bytes(b"[" + b",".join([PLAIN.encode(), *bad, PLAIN.encode()]) + b"]")
    seen = _typed_chunks(monkeypatch)
    fast, slow = _both(path)
    assert seen == Counter({False: 1})
    assert_same_trace(fast, slow)
    assert len(fast) == 2 and "2 event(s) skipped (2 not UTF-8 text)" in fast.warnings[0]


@pytest.mark.parametrize(
    "args",
    [
        '{ "b" : [1 , 2.50, "\\u00e9\\/"] ,\n "a": {"x": 1e2} }',  # spaces, escapes, 2.50, 1e2
        '{"a": 1, "a": 2}',  # a key given twice: its last value, where it was first
        '{"big": 123456789012345678901234567, "neg": -0}',
        '{"\\u0070vti_open": true}',  # the open-span marker, written with an escape
        '{"pvti_open": true, "x": 1}',
        "null",
        "{}",
        "{ \n }",
        "[1, 2]",
        "5",
        '"text"',
    ],
)
def test_args_as_written_read_as_the_per_event_path_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: str
) -> None:
    path = tmp_path / "args.json"
    odd = f'{{"ph":"X","name":"odd","ts":5,"dur":1,"pid":1,"tid":1,"args":{args}}}'
    path.write_text(f"[{PLAIN},{odd},{PLAIN.replace(':1,', ':9,', 1)}]")
    seen = _typed_chunks(monkeypatch)
    fast, slow = _both(path)
    assert seen == Counter({True: 1})
    assert_same_trace(fast, slow)
    odd_row = int(np.flatnonzero(np.array(fast.labels)[fast.label] == "odd")[0])
    parsed = json.loads(args)
    if isinstance(parsed, dict):
        parsed.pop("pvti_open", None)
    elif parsed is not None:
        parsed = {"value": parsed}
    expected = json.dumps(parsed, separators=(",", ":")) if parsed else None
    assert fast.args.get(odd_row) == expected


def test_without_msgspec_every_chunk_is_read_as_dicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evs = _events(random.Random(7), 600)
    path = tmp_path / "t.json"
    _write(path, evs, "kineto")
    typed = chrome_import.import_chrome_file(path, native=False)
    monkeypatch.setattr(json_typed, "_DECODER", None)
    seen = _typed_chunks(monkeypatch)
    as_dicts, slow = _both(path)
    assert seen == Counter({False: 1})
    assert_same_trace(as_dicts, slow)
    assert_same_trace(typed, slow)


def test_eventargs_reads_raw_args_as_their_compact_text() -> None:
    texts = ['{"a":1}', '{"b":"\\u00e9"}']
    raw = [b'{ "c" : [1, 2.50] }', '{"d": "é", "d": 2}'.encode()]
    args = EventArgs.joined(
        [(np.array([4, 0]), [len(t) for t in texts], "".join(texts))],
        [(np.array([2, 9]), [len(r) for r in raw], b"".join(raw))],
    )
    assert args == {4: '{"a":1}', 0: '{"b":"\\u00e9"}', 2: '{"c":[1,2.5]}', 9: '{"d":2}'}
    assert list(args) == [0, 2, 4, 9] and len(args) == 4
    assert 9 in args and 3 not in args and args.get(3) is None
    with pytest.raises(ValueError, match="two args"):
        EventArgs.joined([(np.array([2]), [2], "{}")], [(np.array([2]), [2], b"{}")])


def test_events_nested_past_the_default_limit_read_as_one_by_one_under_a_higher_one(
    tmp_path: Path,
) -> None:
    deep = "[" * 450 + "]" * 450
    path = tmp_path / "deep.json"
    path.write_text(f'[{PLAIN},{{"ph":"X","name":"deep","ts":3,"dur":1,"pid":1,"tid":1,'
                    f'"zz":{deep}}},{{"ph":"M","name":"thread_name","pid":1,"tid":1,'
                    f'"args":{{"name":"t","zz":{deep}}}}}]')  # fmt: skip
    fast = chrome_import.import_chrome_file(path, max_depth=600, native=False)
    assert_same_trace(fast, chrome_import.import_chrome_file(path, max_depth=600, fast=False))
    assert len(fast) == 2 and fast.threads[0].name == "t"
    assert (
        len(chrome_import.import_chrome_file(path, native=False)) == 1
    )  # the default limit skips it


@pytest.mark.parametrize("pids", [[3, 1, 3, 2], [-(2**63), 2**63 - 1, 0, 7], [2**70, 1, 2**70, 5]])
def test_int_ids_of_any_size_make_tracks_in_the_order_they_are_first_named(
    tmp_path: Path, pids: list[int]
) -> None:
    evs = [{"ph": "X", "name": "a", "ts": i, "dur": 1, "pid": pid, "tid": tid}
           for i, (pid, tid) in enumerate(zip(pids * 3, [9, 2**62, -4, 9] * 3, strict=True))]  # fmt: skip
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(evs))
    fast, slow = _both(path)
    assert_same_trace(fast, slow)
    made = {(fast.processes[t.process].pid, t.name) for t in fast.threads}
    assert made == {(ev["pid"], f"Thread {ev['tid']}") for ev in evs}
