"""The native kernel (``_chrome_scan``, C) gives exactly the Trace the per-event path and
the typed path give -- the same columns, dtypes, args text, tracks, flows and warnings --
on generated, fuzzed and Kineto-like traces cut into chunks at every byte, under nesting
limits, on damaged files, and on any events (a property). The kernel on one buffer and its
numbers: ``test_chrome_native_kernel.py``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.trace import chrome_import
from tests.fuzzing import DERANDOMIZE, examples
from tests.profiler_core.chrome_native_texts import (
    _every_chunk_mixed,  # noqa: F401 - autouse
    assert_all_same,
    chunked,
    counting,
    trace_text,
)
from tests.profiler_core.test_chrome_typed_path import _events, _write

# -- generated traces ------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["compact", "kineto", "lines"])
@pytest.mark.parametrize("chunk_bytes", [3000, 1 << 18])
def test_native_path_equals_the_per_event_and_typed_paths_on_generated_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, chunk_bytes: int
) -> None:
    evs = _events(random.Random(f"native{layout}{chunk_bytes}"), 2500)
    path = tmp_path / "t.json"
    _write(path, evs, layout)
    monkeypatch.setattr(chrome_import, "read_events", chunked(chunk_bytes))
    seen = counting(monkeypatch)
    trace = assert_all_same(path)
    assert seen["native"] > 100 and seen["other"] > 600  # both kinds of event were met
    assert len(trace) > 1500 and len(trace.args) > 500


@pytest.mark.parametrize("chunk_bytes", [777, 1 << 18])
def test_a_kineto_like_trace_is_read_natively_as_the_other_paths_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int
) -> None:
    from benchmarks.bench_chrome_import import write_kineto_like

    path = tmp_path / "kineto.json"
    write_kineto_like(path, 400_000)
    monkeypatch.setattr(chrome_import, "read_events", chunked(chunk_bytes))
    seen = counting(monkeypatch)
    trace = assert_all_same(path)
    # all but the process_name metadata event read into columns, no buffer refused
    assert seen["other"] == 1 and seen["refused"] == 0
    assert seen["native"] == len(trace) + 2 * len(trace.flows) > 4000
    assert len(trace.flows) > 500 and len(trace.args) == len(trace)


@pytest.mark.parametrize("seed", range(12))
def test_fuzzed_events_read_natively_equal_the_other_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    path = tmp_path / "fuzz.json"
    one_chunk = seed % 4 == 3  # else events cut at many bytes, and some chunks refused
    path.write_text(trace_text(f"fuzz{seed}", 400, refusing=not one_chunk), "utf-8")
    chunk = 1 << 18 if one_chunk else [7, 61, 500][seed % 4]
    monkeypatch.setattr(chrome_import, "read_events", chunked(chunk))
    seen = counting(monkeypatch)
    assert_all_same(path)
    assert seen["native"] > 0 and seen["other"] > 0 and (seen["refused"] > 0) != one_chunk


@pytest.mark.parametrize("max_depth", [1, 2, 3, 4, 600])
def test_a_nesting_limit_skips_the_same_events_as_the_other_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_depth: int
) -> None:
    path = tmp_path / "deep.json"
    deep = "[" * 100 + "]" * 100  # past the kernel's 64: the typed / dict paths read it
    text = trace_text("deep", 200).replace('"zz"', f'"zz": {deep}, "yy"', 3)
    path.write_text(text, "utf-8")
    monkeypatch.setattr(chrome_import, "read_events", chunked(2000))
    assert_all_same(path, max_depth=max_depth)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13, 33, 97])
def test_events_cut_at_every_byte_are_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    text = trace_text("cut", 40)
    path = tmp_path / "cut.json"
    path.write_text(text, "utf-8")
    monkeypatch.setattr(chrome_import, "read_events", chunked(chunk))
    assert_all_same(path)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [0.1, 0.37, 0.5, 0.83, 0.999])
def test_a_file_cut_short_reads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: float
) -> None:
    text = trace_text("short", 300).encode()
    path = tmp_path / "short.json"
    path.write_bytes(text[: int(len(text) * cut)])
    monkeypatch.setattr(chrome_import, "read_events", chunked(1000))
    trace = assert_all_same(path)
    if not isinstance(trace, str):
        assert any("ends" in w for w in trace.warnings)


BAD_FILES = [b'[{"ph":"X","ts":1,"dur":1,"args":{"n":' + b"7" * 5000 + b'}}, {"ph":"i","ts":1}]',
             b'[{"ts": 9223372036854776.0, "ph": "C", "pid": 0, "name": 0, "args": {"v": 1}},'
             b' {"ts": 5, "ph": "C", "name": "c", "args": {"v": 2}}]',  # past int64 as ns
             b"", b"   ", b"{", b"[", b"[}", b"[1, 2, 3]", b'{"traceEvents": 5}', b"\x00\x01\x02",
             b'[{"ph":"X","ts":1,"dur":1}, 7, "x", {"ph":"X","ts":2,"dur":1}]',
             b'[{"ph":"X","ts":1,"dur":1} {"ph":"X","ts":2,"dur":1}]',
             b'[{"ph":"X","ts":1,"dur":1},,,{"ph":"X","ts":2,"dur":1},]',
             b'{"traceEvents": [{"ph":"X","ts":1,"dur":1}], "otherData": {"a": NaN}}']  # fmt: skip


@pytest.mark.parametrize("text", BAD_FILES)
def test_bad_files_are_read_or_refused_as_the_per_event_path_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bytes
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(text)
    assert_all_same(path)


def test_ids_that_look_like_numbers_to_isdigit_but_not_to_int_are_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # int("--5") and int("²") raise: the import raised ValueError on every path before
    path = tmp_path / "ids.json"
    path.write_text(json.dumps([{"ph": "X", "ts": 1, "dur": 1, "pid": "--5", "tid": "²"},
                                {"ph": "X", "ts": 2, "dur": 1, "pid": " 12 ", "tid": "１２"}]),
                    "utf-8")  # fmt: skip
    trace = assert_all_same(path)
    assert [(trace.processes[t.process].pid, t.name) for t in trace.threads] == [
        ("--5", "Thread ²"),
        (12, "Thread 12"),
    ]


# -- property: any events ------------------------------------------------------------------------

_any_numbers = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.1, 1e300, -0.0, 2**53 + 1, 9.2e18, 1.7e308]),
)  # fmt: skip
_values = st.one_of(_any_numbers, st.text(max_size=4), st.none(), st.booleans(),
                    st.lists(st.integers(), max_size=2))  # fmt: skip
_event = st.dictionaries(
    st.sampled_from(["ph", "ts", "dur", "pid", "tid", "name", "cat", "args", "s", "id", "bp",
                     "bind_id"]),
    st.one_of(_values, st.sampled_from(["X", "X", "i", "I", "s", "t", "f", "B", "E", "M", "g"]),
              st.dictionaries(st.sampled_from(["name", "v", "pvti_open", "é\\"]), _values)),
)  # fmt: skip


@settings(max_examples=examples(150), derandomize=DERANDOMIZE, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(st.lists(_event, max_size=12), st.sampled_from([",", ",\n  ", " , "]),
       st.integers(1, 400))  # fmt: skip
def test_any_events_read_natively_equal_the_per_event_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, evs: list, sep: str, chunk: int
) -> None:
    path = tmp_path / "any.json"
    path.write_text("[" + sep.join(json.dumps(ev, ensure_ascii=chunk % 2 == 0) for ev in evs)
                    + "]", "utf-8")  # fmt: skip
    with monkeypatch.context() as m:
        m.setattr(chrome_import, "read_events", chunked(chunk))
        assert_all_same(path)
