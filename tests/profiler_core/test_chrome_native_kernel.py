"""The native kernel (``_chrome_scan``, C) on one buffer: every prefix read up to its last
complete event and never a byte past it, what it would read otherwise than ``json.loads``
refused, the events it does not take handed back as ``json.loads`` reads them, escapes,
string ids and args as the file writes them, and its numbers bit for bit Python's."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from profiler_core.trace import chrome_import, chrome_native
from tests.profiler_core.chrome_native_texts import (
    _every_chunk_mixed,  # noqa: F401 - autouse
    assert_all_same,
    chunked,
    counting,
    event_text,
)

# -- the kernel on one buffer ------------------------------------------------------------------


def _scan(buf: bytes) -> Any:
    reader = chrome_native.NativeReader(200)
    return reader.read(buf)


def test_every_prefix_of_a_buffer_is_read_up_to_its_last_complete_event() -> None:
    rng = random.Random(5)
    events = [event_text(rng, i).encode() for i in range(30)]
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
        evs = [event_text(rng, i).encode() for i in range(rng.randint(1, 8))]
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
    monkeypatch.setattr(chrome_import, "read_events", chunked(20_000))
    seen = counting(monkeypatch)
    assert_all_same(path)
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
    trace = assert_all_same(path)
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
