"""The native kernel (``_chrome_scan``, C) gives exactly the Trace the per-event path and
the typed path give -- the same columns, dtypes, args text, tracks, flows and warnings --
on generated traces with every field shape, number form, escape and layout, cut into
chunks at every byte; what it does not read exactly as ``json.loads`` it leaves to the
other paths, and it never reads past the buffer it is given."""

from __future__ import annotations

import json
import random
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.errors import ReportError
from profiler_core.trace import chrome_import, chrome_native, json_events
from profiler_core.trace.chrome_import import import_chrome_file
from tests.fuzzing import DERANDOMIZE, examples
from tests.profiler_core.test_chrome_fast_path import assert_same_trace
from tests.profiler_core.test_chrome_typed_path import _events, _write

pytestmark = pytest.mark.skipif(not chrome_native.available(), reason="kernel not built")


@pytest.fixture(autouse=True)
def _every_chunk_mixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel keeps chunks of mostly other events too, so that these tests mix its
    columns with Builder.add's events (a chunk of mostly other events is the typed path's,
    see test_a_chunk_of_mostly_other_events_is_left_to_the_typed_path)."""
    monkeypatch.setattr(chrome_native, "_MOST_OTHERS", 2.0)


def _chunked(chunk_bytes: int) -> Any:
    def read(*args: Any, **kwargs: Any) -> Any:
        return json_events.read_events(*args, chunk_bytes=chunk_bytes, **kwargs)

    return read


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts the events the kernel read into columns ("native"), the events it handed to
    Builder.add ("other") and the buffers it refused ("refused")."""
    seen: Counter = Counter()
    read, add_run = chrome_native.NativeReader.read, chrome_native._add_run

    def counted_read(self: Any, buf: bytes) -> Any:
        got = read(self, buf)
        if got is None:
            seen["refused"] += 1
        else:
            seen["other"] += len(got[0].others)
        return got

    def counted_run(builder: Any, chunk: Any, a: int, b: int) -> None:
        seen["native"] += b - a
        add_run(builder, chunk, a, b)

    monkeypatch.setattr(chrome_native.NativeReader, "read", counted_read)
    monkeypatch.setattr(chrome_native, "_add_run", counted_run)
    return seen


def _three_paths(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> tuple:
    """The native path's Trace (or error text), the per-event path's and the typed path's."""
    out = []
    for how in ("native", "per-event", "typed"):
        with monkeypatch.context() as m:
            if how == "typed":
                m.setattr(chrome_native, "available", lambda: False)
            try:
                out.append(import_chrome_file(path, fast=how != "per-event", **kwargs))
            except ReportError as err:
                out.append(str(err))
    return tuple(out)


def _assert_all_same(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> Any:
    native, per_event, typed = _three_paths(path, monkeypatch, **kwargs)
    if isinstance(per_event, str):
        assert native == per_event == typed
        return native
    assert_same_trace(native, per_event)
    assert_same_trace(native, typed)
    return native


# -- generated traces ------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["compact", "kineto", "lines"])
@pytest.mark.parametrize("chunk_bytes", [3000, 1 << 18])
def test_native_path_equals_the_per_event_and_typed_paths_on_generated_traces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, chunk_bytes: int
) -> None:
    evs = _events(random.Random(f"native{layout}{chunk_bytes}"), 2500)
    path = tmp_path / "t.json"
    _write(path, evs, layout)
    monkeypatch.setattr(chrome_import, "read_events", _chunked(chunk_bytes))
    seen = _counting(monkeypatch)
    trace = _assert_all_same(path, monkeypatch)
    assert seen["native"] > 100 and seen["other"] > 600  # both kinds of event were met
    assert len(trace) > 1500 and len(trace.args) > 500


@pytest.mark.parametrize("chunk_bytes", [777, 1 << 18])
def test_a_kineto_like_trace_is_read_natively_as_the_other_paths_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int
) -> None:
    from benchmarks.bench_chrome_import import write_kineto_like

    path = tmp_path / "kineto.json"
    write_kineto_like(path, 400_000)
    monkeypatch.setattr(chrome_import, "read_events", _chunked(chunk_bytes))
    seen = _counting(monkeypatch)
    trace = _assert_all_same(path, monkeypatch)
    # all but the process_name metadata event read into columns, no buffer refused
    assert seen["other"] == 1 and seen["refused"] == 0
    assert seen["native"] == len(trace) + 2 * len(trace.flows) > 4000
    assert len(trace.flows) > 500 and len(trace.args) == len(trace)


_WS = ["", "", "", " ", "\n  ", "\t", "\r\n", "  \n    "]


def _number_text(rng: random.Random) -> str:
    """A JSON number in any of the forms writers use."""
    roll = rng.random()
    if roll < 0.25:
        return str(rng.randint(-(10**6), 10**12))
    if roll < 0.45:
        return f"{1_700_000_000_000_000 + rng.randint(0, 10**9) * 0.125:.3f}"
    if roll < 0.6:
        return repr(rng.uniform(-1e6, 1e9))
    if roll < 0.7:
        return rng.choice(["0", "-0", "0.0", "-0.0", "1e3", "1E+3", "2.5e-3", "1e400",
                           "-1e400", "1e-400", "123456789012345678901234", "9223372036854775808",
                           "9223372036854775807", "-9223372036854775808", "5e-324",
                           "1.00000000000000000000000001", "9007199254740993.0",
                           "0.30000000000000004", "1.7976931348623157e308"])  # fmt: skip
    mantissa = str(rng.randint(1, 10 ** rng.randint(1, 22)))
    k = rng.randint(0, len(mantissa))
    text = mantissa[:k] + "." + mantissa[k:] if 0 < k < len(mantissa) else mantissa
    if rng.random() < 0.4:
        text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 40))
    return ("-" if rng.random() < 0.2 else "") + text


def _string_text(rng: random.Random) -> str:
    """A JSON string: plain, raw unicode, or with escapes of every kind."""
    plain = rng.choice(["aten::mm", "kernel<float, 4>(float*)", "ünï", "名前", "🚀", "", "a b"])
    roll = rng.random()
    if roll < 0.7:
        return json.dumps(plain, ensure_ascii=False)
    if roll < 0.85:
        return json.dumps(plain + rng.choice(['"', "\\", "\n", "\t", "/", "\u2028"]))
    return '"' + rng.choice(["\\u0041b", "\\/x", "\\ud83d\\ude80", "\\b\\f\\r", "\\ud800"]) + '"'


def _value_text(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if roll < 0.3 or depth > 3:
        return _number_text(rng)
    if roll < 0.55:
        return _string_text(rng)
    if roll < 0.65:
        return rng.choice(["true", "false", "null"])
    items = [_value_text(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    ws = rng.choice(_WS)
    if roll < 0.8:
        return "[" + ws + ("," + ws).join(items) + ws + "]"
    keys = [_string_text(rng) for _ in items]
    return "{" + ws + ", ".join(f"{k}{ws}:{ws}{v}" for k, v in zip(keys, items, strict=True)) + "}"


def _event_text(rng: random.Random, i: int, refusing: bool = True) -> str:
    """One event as text: the common fields in common forms mostly, odd ones sometimes,
    keys in any order, duplicated or unknown, whitespace anywhere JSON allows."""
    ph = rng.choice(["X"] * 6 + ["i", "I", "s", "t", "f", "B", "E", "M", "C", "Xy", "b"])
    fields: list[tuple[str, str]] = [('"ph"', json.dumps(ph))]
    t = 1000 + i * 3
    odd = rng.random() < 0.15
    fields.append(('"ts"', _number_text(rng) if odd else rng.choice([str(t), f"{t}.5"])))
    if ph.startswith("X") or rng.random() < 0.1:
        fields.append(('"dur"', _number_text(rng) if odd else rng.choice(["2", "0", "1.25"])))
    if rng.random() < 0.9:
        fields.append(('"name"', _string_text(rng) if rng.random() < 0.5 else '"op"'))
    if rng.random() < 0.8:
        fields.append(('"cat"', rng.choice(['"cpu_op"', '"kernel"', '"ac2g"', '"ç"', "7"])))
    odd_ids = ["1", "2", "7", "-3", '"7"', "true", "null", "1.0", "99999999999999999999"]
    for key in ("pid", "tid"):
        if rng.random() < 0.9:
            fields.append((f'"{key}"', rng.choice(odd_ids if odd else ["1", "2", "2847"])))
    if ph in ("s", "t", "f") or rng.random() < 0.05:
        fields.append(('"id"', rng.choice([str(i // 2), str(i // 2), f'"{i // 2}"', "1.5"])))
    if rng.random() < 0.2:
        fields.append(('"bp"', rng.choice(['"e"', '"x"', "1", '"\\u0065"'])))
    if rng.random() < 0.2:
        fields.append(('"s"', rng.choice(['"t"', '"p"', '"g"', "5", '"\\u0067"'])))
    odd_args = ["{}", "null", "{ }", _value_text(rng, 1), '{"pvti_open": true}',
                '{"\\u0070vti_open": 1}', '{"a": 1, "a": 2}']  # fmt: skip
    if rng.random() < 0.6:
        fields.append(('"args"', rng.choice(odd_args) if odd else f'{{"External id": {i}}}'))
    if rng.random() < 0.3:  # unknown keys, escaped keys, bind_id
        fields.append((rng.choice(['"zz"', '"\\u0074s"', '"bind_id"', '"flow_out"', '"x y"']),
                       _value_text(rng, 1)))  # fmt: skip
    if refusing and rng.random() < 0.03:  # the kernel refuses it: the other paths read it
        fields.append(('"zz"', rng.choice(["NaN", "-Infinity", "[" * 70 + "]" * 70])))
    if rng.random() < 0.05:  # a key given twice: json.loads keeps the last
        fields.append(rng.choice(fields))
    rng.shuffle(fields)
    ws = rng.choice(_WS)
    return "{" + ws + ("," + ws).join(f"{k}{ws}:{rng.choice(_WS)}{v}" for k, v in fields) + ws + "}"


def _trace_text(seed: str, n: int, refusing: bool = True) -> str:
    rng = random.Random(seed)
    evs = [_event_text(rng, i, refusing) for i in range(n)]
    sep = rng.choice([",", ",\n", ",\n  ", " , "])
    return '{"traceEvents": [\n' + sep.join(evs) + '\n], "displayTimeUnit": "ns"}'


@pytest.mark.parametrize("seed", range(12))
def test_fuzzed_events_read_natively_equal_the_other_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    path = tmp_path / "fuzz.json"
    one_chunk = seed % 4 == 3  # else events cut at many bytes, and some chunks refused
    path.write_text(_trace_text(f"fuzz{seed}", 400, refusing=not one_chunk), "utf-8")
    chunk = 1 << 18 if one_chunk else [7, 61, 500][seed % 4]
    monkeypatch.setattr(chrome_import, "read_events", _chunked(chunk))
    seen = _counting(monkeypatch)
    _assert_all_same(path, monkeypatch)
    assert seen["native"] > 0 and seen["other"] > 0 and (seen["refused"] > 0) != one_chunk


@pytest.mark.parametrize("max_depth", [1, 2, 3, 4, 600])
def test_a_nesting_limit_skips_the_same_events_as_the_other_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, max_depth: int
) -> None:
    path = tmp_path / "deep.json"
    deep = "[" * 100 + "]" * 100  # past the kernel's 64: the typed / dict paths read it
    text = _trace_text("deep", 200).replace('"zz"', f'"zz": {deep}, "yy"', 3)
    path.write_text(text, "utf-8")
    monkeypatch.setattr(chrome_import, "read_events", _chunked(2000))
    _assert_all_same(path, monkeypatch, max_depth=max_depth)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13, 33, 97])
def test_events_cut_at_every_byte_are_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    text = _trace_text("cut", 40)
    path = tmp_path / "cut.json"
    path.write_text(text, "utf-8")
    monkeypatch.setattr(chrome_import, "read_events", _chunked(chunk))
    _assert_all_same(path, monkeypatch)


# -- the kernel on one buffer ------------------------------------------------------------------


def _scan(buf: bytes) -> Any:
    reader = chrome_native.NativeReader(200)
    return reader.read(buf)


def test_every_prefix_of_a_buffer_is_read_up_to_its_last_complete_event() -> None:
    rng = random.Random(5)
    events = [_event_text(rng, i).encode() for i in range(30)]
    buf = b",\n".join(events) + b"\n]"
    ends, at = [], 0
    for ev in events:
        ends.append((at, at + len(ev)))
        at += len(ev) + 2
    for cut in range(len(buf) + 1):
        got = _scan(buf[:cut])
        if got is None:  # refused: the other paths read it
            continue
        chunk, keep_from, array_end = got
        complete = [(a, b) for a, b in ends if b <= cut]
        assert chunk.n == len(complete), cut
        partial = [a for a, b in ends if a < cut < b]
        if array_end >= 0:
            assert array_end == len(buf) - 1 and cut == len(buf)
        elif partial:
            assert keep_from == partial[0], cut
        else:
            assert keep_from == (complete[-1][1] if complete else 0), cut
        assert chunk.cols["stop"].tolist() == [b for _, b in complete]


def test_the_kernel_reads_no_byte_past_its_buffer() -> None:
    """Every prefix of damaged and whole events, each in a numpy buffer of exactly its
    bytes (no NUL after it, unlike bytes): under ``make asan`` AddressSanitizer fails any
    read past the end; here, no crash and no event past the cut."""
    from profiler_core.trace import _chrome_scan

    rng = random.Random(3)
    scanner = _chrome_scan.Scanner(200)
    for _ in range(15):
        evs = [_event_text(rng, i).encode() for i in range(rng.randint(1, 8))]
        text = rng.choice([b",", b",\n", b" , "]).join(evs) + rng.choice([b"", b"]", b"\n]}"])
        if rng.random() < 0.3:  # a damaged byte anywhere
            k = rng.randrange(len(text))
            text = text[:k] + bytes([rng.randrange(256)]) + text[k + 1 :]
        for cut in range(len(text) + 1):
            buf = np.frombuffer(text[:cut], np.uint8).copy()
            columns = tuple(np.empty(cut // 2 + 1, d) for d in chrome_native._DTYPES)
            got = scanner.scan(buf, columns, np.empty(max(cut, 1), np.uint8))
            if got is not None:
                n, keep_from, array_end, _ = got
                assert 0 <= keep_from <= cut and array_end < cut
                assert (columns[-1][:n] <= cut).all()  # each event's end


@pytest.mark.parametrize(
    "buf",
    [
        b'{"ph":"X","ts":NaN,"dur":1}',
        b'{"ph":"X","ts":1,"dur":1,"args":{"v":Infinity}}',
        b'{"ph":"X","ts":1,"dur":1,"args":{"v":-Infinity}}',
        b'{"ph":"X","ts":1,"dur":1,"name":"\xe9"}',  # latin-1, not UTF-8
        b'{"ph":"X","ts":1,"dur":1,"name":"\xed\xa0\x80"}',  # a surrogate in UTF-8
        b'{"ph":"X","ts":1,"dur":1,"name":"\xc0\xaf"}',  # overlong
        b'{"ph":"X","ts":1,"dur":1,"name":"a\x01b"}',  # a control character
        b'{"ph":"X","ts":01,"dur":1}',
        b'{"ph":"X","ts":1.,"dur":1}',
        b'{"ph":"X","ts":.5,"dur":1}',
        b'{"ph":"X","ts":+1,"dur":1}',
        b'{"ph":"X","ts":1,"dur":1,}',
        b'{"ph":"X","ts":1 "dur":1}',
        b'{"ph":"X","ts":1,"dur":1,"args":{"a":"\\x"}}',
        b'{"ph":"X","ts":1,"dur":1,"args":{"a":"\\u12g4"}}',
        b'{"ph":"X","ts":1,"dur":1,"args":[1,]}',
        b'{"ph":"X","ts":1,"dur":1,"args":tru}',
        b"5",
        b'"text"',
        b"[1]",
        b'{"ph":"X"}}',
        b'\xef\xbb\xbf{"ph":"X"}',
        b'{"ph":"X","zz":' + b"[" * 80 + b"]" * 80 + b"}",  # deeper than the kernel's limit
        b'{"ph":"X","ts":1,"dur":1,"args":{"n":' + b"7" * 5000 + b"}}",  # json.loads: too long
        b'{"ph":"X","ts":1,"dur":1,"zz":-' + b"7" * 641 + b"}",
    ],
)
def test_a_buffer_the_kernel_would_read_otherwise_than_json_loads_is_refused(buf: bytes) -> None:
    assert _scan(buf + b",") is None


def test_events_the_kernel_does_not_take_come_back_as_json_loads_reads_them() -> None:
    others = [b"{}", b'{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}}',
              b'{"ph":"X","ts":1,"dur":1,"pid":"7"}', b'{"ph":"X","ts":1,"dur":1,"tid":true}',
              b'{"ph":"X","ts":1,"dur":1,"ts":2}', b'{"ph":"X","\\u0074s":1,"dur":1}',
              b'{"ph":"X","ts":1,"dur":1,"args":{"pvti_open":true}}',
              b'{"ph":"X","ts":1,"dur":1,"args":[1]}', b'{"ph":"X","ts":1,"dur":1,"bind_id":3}',
              b'{"ph":"i","ts":1,"s":"g"}', b'{"ph":"X","ts":1,"dur":-1}',
              b'{"ph":"X","ts":1e400,"dur":1}', b'{"ph":"X","ts":1,"dur":1,"name":"\\ud800"}',
              b'{"ph":"s","ts":1,"id":"3"}', b'{"ph":"X","ts":99999999999999999999,"dur":1}',
              b'{"ph":"X","ts":9.3e18,"dur":1}', b'{"ph":"Xx","ts":1,"dur":1}',
              b'{"ph":"X","ts":1,"dur":1,"name":null}', b'{"ph":"X","ts":"5","dur":1}']  # fmt: skip
    plain = b'{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1,"args":{"k":1}}'
    buf = b",".join(x for o in others for x in (plain, o)) + b"]"
    chunk, _, array_end = _scan(buf)
    assert array_end == len(buf) - 1
    assert chunk.n == 2 * len(others)
    assert (chunk.cols["cls"][1::2] == chrome_native.OTHER).all()
    assert (chunk.cols["cls"][::2] == chrome_native.SPAN).all()
    assert chunk.others == [json.loads(o) for o in others]


def test_names_with_escapes_are_read_natively_as_json_loads_decodes_them() -> None:
    names = [r"a\"b", r"C:\\Users\\x", r"\/\b\f\n\r\t", r"\u00e9\u0000", r"\ud83d\ude80 rocket",
             r"\u4e2d\u6587", "raw é 🚀"]  # fmt: skip
    buf = ",".join(f'{{"ph":"X","ts":1,"dur":1,"name":"{n}","cat":"{n}"}}' for n in names)
    chunk, _, _ = _scan(buf.encode() + b",")
    assert (chunk.cols["cls"] == chrome_native.SPAN).all()
    strings = chunk.reader.scanner.strings
    decoded = [json.loads(f'"{n}"') for n in names]
    assert [strings[k] for k in chunk.cols["name"]] == decoded
    assert [strings[k] for k in chunk.cols["cat"]] == decoded
    # a lone surrogate, or a high one followed by no low one: Python keeps it, so does the
    # per-event path
    for lone in (r"\ud800", r"\udc00x", r"\ud800\u0041", r"x\ud83d"):
        chunk, _, _ = _scan(f'{{"ph":"X","ts":1,"dur":1,"name":"{lone}"}},'.encode())
        assert chunk.cols["cls"].tolist() == [chrome_native.OTHER]
        assert chunk.others[0]["name"] == json.loads(f'"{lone}"')


def test_a_chunk_of_mostly_other_events_is_left_to_the_typed_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # numeric-string tids ("7" is the thread 7): the typed path reads them in runs, ~3x
    # faster than Builder.add one by one
    monkeypatch.setattr(chrome_native, "_MOST_OTHERS", 0.25)
    evs = [{"ph": "X", "name": "op", "ts": i, "dur": 1, "pid": 1, "tid": str(i % 4)}
           for i in range(3000)]  # fmt: skip
    evs[1000:1100] = [dict(ev, tid=7) for ev in evs[1000:1100]]  # a few common ones
    path = tmp_path / "tids.json"
    path.write_text(json.dumps(evs))
    monkeypatch.setattr(chrome_import, "read_events", _chunked(20_000))
    seen = _counting(monkeypatch)
    _assert_all_same(path, monkeypatch)
    assert seen["refused"] >= 8 and seen["native"] == 0  # every chunk mostly string tids
    odd, plain = b'{"ph":"X","ts":1,"dur":1,"tid":"3"},', b'{"ph":"X","ts":1,"dur":1},'
    assert len(_scan(odd * 20 + plain * 80)[0].others) == 20  # a fifth: kept
    assert _scan(odd * 30 + plain * 80) is None  # over a quarter: the typed path's


@pytest.mark.parametrize(
    ("ids", "native"),
    [
        ('"pid": "proc", "tid": "gpu stream 7"', True),
        ('"pid": "", "tid": " - "', True),
        ('"pid": "Traces"', True),  # no tid: the pid's string
        ('"pid": 3, "tid": "PyTorch Profiler"', True),
        ('"pid": "7", "tid": 1', False),  # a numeric string is its number: ident decides
        ('"pid": 1, "tid": " -12 "', False),
        ('"pid": 1, "tid": "１２"', False),  # digits beyond ASCII: str.isdigit decides
        ('"pid": "\\u0070", "tid": 1', False),  # escaped
    ],
)
def test_string_ids_are_read_natively_as_fields_ident_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ids: str, native: bool
) -> None:
    text = ",".join(f'{{"ph":"X","name":"a","ts":{i},"dur":1,{ids}}}' for i in range(5))
    chunk, _, _ = _scan(text.encode() + b",")
    assert (chunk.cols["cls"] != chrome_native.OTHER).all() == native
    assert len(chunk.others) == (0 if native else 5)
    path = tmp_path / "ids.json"
    path.write_text(f"[{text}]", "utf-8")
    trace = _assert_all_same(path, monkeypatch)
    assert len(trace) == 5


def test_args_are_kept_as_the_file_writes_them() -> None:
    args = [b'{ "b" : [1 , 2.50, "\\u00e9\\/"] ,\n "a": {"x": 1e2} }', b"{}", b"null", b"{ }",
            b'{"big": 123456789012345678901234567, "neg": -0, "inf": 1e999}']  # fmt: skip
    buf = b",".join(b'{"ph":"X","ts":1,"dur":1,"args":%s}' % a for a in args) + b","
    chunk, _, _ = _scan(buf)
    lengths = chunk.cols["args_len"].tolist()
    assert lengths == [len(args[0]), 0, 0, 0, len(args[4])]
    assert chunk.args == args[0] + args[4]


# -- numbers ------------------------------------------------------------------------------------


def _numbers(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.2:  # epoch µs with three decimals, as Kineto writes them
            out.append(f"{1_700_000_000_000_000 + rng.randint(0, 10**9) * 50.123:.3f}")
        elif roll < 0.4:  # 17-30 digit mantissas, exponents to +-330
            nd = rng.randint(1, 30)
            m = str(rng.randint(10 ** (nd - 1), 10**nd - 1))
            k = rng.randint(1, nd)
            text = m[:k] + ("." + m[k:] if k < nd else "")
            if rng.random() < 0.6:
                text += "e" + str(rng.randint(-330, 330))
            out.append(("-" if rng.random() < 0.3 else "") + text)
        elif roll < 0.6:  # every double's shortest repr
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            out.append(repr(x) if np.isfinite(x) else "0.5")
        elif roll < 0.8:  # halfway between two doubles: rounding to even decides
            x = rng.uniform(1, 2 ** rng.randint(53, 63))
            lo = int(x)
            ulp = 2 ** max(0, lo.bit_length() - 53)
            lo -= lo % ulp
            half = lo * 2 + ulp  # twice the midpoint, an integer
            digits = str(half * 5)  # the midpoint * 10: one decimal, exact
            out.append(digits[:-1] + "." + digits[-1] + "0" * rng.randint(0, 2))
        else:
            out.append(str(rng.randint(-(2**64), 2**64)))
    return out


def test_the_kernels_numbers_are_json_loads_numbers_bit_for_bit() -> None:
    from profiler_core.trace import _chrome_scan

    for text in _numbers(random.Random(42), 200_000):
        want = json.loads(text)
        got = _chrome_scan.parse_float(text.encode())
        if isinstance(want, int) and not -(2**63) <= want < 2**63:
            assert got is None, text  # past int64: the per-event path reads it
            continue
        assert type(got) is type(want), text
        assert struct.pack("<d", got) == struct.pack("<d", want) if type(want) is float else (
            got == want
        ), text  # fmt: skip


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [0.1, 0.37, 0.5, 0.83, 0.999])
def test_a_file_cut_short_reads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: float
) -> None:
    text = _trace_text("short", 300).encode()
    path = tmp_path / "short.json"
    path.write_bytes(text[: int(len(text) * cut)])
    monkeypatch.setattr(chrome_import, "read_events", _chunked(1000))
    trace = _assert_all_same(path, monkeypatch)
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
    _assert_all_same(path, monkeypatch)


def test_ids_that_look_like_numbers_to_isdigit_but_not_to_int_are_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # int("--5") and int("²") raise: the import raised ValueError on every path before
    path = tmp_path / "ids.json"
    path.write_text(json.dumps([{"ph": "X", "ts": 1, "dur": 1, "pid": "--5", "tid": "²"},
                                {"ph": "X", "ts": 2, "dur": 1, "pid": " 12 ", "tid": "１２"}]),
                    "utf-8")  # fmt: skip
    trace = _assert_all_same(path, monkeypatch)
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
        m.setattr(chrome_import, "read_events", _chunked(chunk))
        _assert_all_same(path, m)
