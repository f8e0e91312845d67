"""What the native kernel's tests share: the three import paths side by side (native,
per-event, typed) and the kernel's events counted, and generated event text with every field
shape, number form, escape and layout."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from profiler_core.errors import ReportError
from profiler_core.trace import chrome_native, json_events
from profiler_core.trace.chrome_import import import_chrome_file
from tests.profiler_core.test_chrome_fast_path import assert_same_trace


@pytest.fixture(autouse=True)
def _every_chunk_mixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel keeps chunks of mostly other events too, so that these tests mix its
    columns with Builder.add's events (a chunk of mostly other events is the typed path's,
    see test_a_chunk_of_mostly_other_events_is_left_to_the_typed_path)."""
    monkeypatch.setattr(chrome_native, "_MOST_OTHERS", 2.0)


def chunked(chunk_bytes: int) -> Any:
    def read(*args: Any, **kwargs: Any) -> Any:
        return json_events.read_events(*args, chunk_bytes=chunk_bytes, **kwargs)

    return read


def counting(monkeypatch: pytest.MonkeyPatch) -> Counter:
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


def three_paths(path: Path, **kwargs: Any) -> tuple:
    """The native path's Trace (or error text), the per-event path's and the typed path's."""
    out = []
    for how in ("native", "per-event", "typed"):
        try:
            path_kwargs = {"fast": how != "per-event", "native": how == "native"}
            out.append(import_chrome_file(path, **path_kwargs, **kwargs))
        except ReportError as err:
            out.append(str(err))
    return tuple(out)


def assert_all_same(path: Path, **kwargs: Any) -> Any:
    native, per_event, typed = three_paths(path, **kwargs)
    if isinstance(per_event, str):
        assert native == per_event == typed
        return native
    assert_same_trace(native, per_event)
    assert_same_trace(native, typed)
    return native


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


def event_text(rng: random.Random, i: int, refusing: bool = True) -> str:
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


def trace_text(seed: str, n: int, refusing: bool = True) -> str:
    rng = random.Random(seed)
    evs = [event_text(rng, i, refusing) for i in range(n)]
    sep = rng.choice([",", ",\n", ",\n  ", " , "])
    return '{"traceEvents": [\n' + sep.join(evs) + '\n], "displayTimeUnit": "ns"}'
