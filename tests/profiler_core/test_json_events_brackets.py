"""The events array is split into events by its brackets alone (quotes located, not walked):
the same brackets, depths and events as the full structural scan, and the events, skips and
counts a whole-document ``json.loads`` gives, whatever the chunk size, escapes or items."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.trace import json_events
from profiler_core.trace.json_events import EventStream, _scan, _scan_brackets, read_events
from tests.fuzzing import DERANDOMIZE, examples

BRACKETS = [ord(c) for c in "[]{}"]


def test_brackets_inside_strings_and_escaped_quotes_are_not_structure() -> None:
    # counted by hand: the quote at 14 is escaped, the one at 28 follows an escaped backslash
    buf = rb'{"a":"}{[","b\"":[1,{"c":"\\"}]},{"d":"]"}'
    assert [buf[i : i + 1] for i in (0, 17, 20, 29, 30, 31, 33, 41)] == [
        b"{", b"[", b"{", b"}", b"]", b"}", b"{", b"}",
    ]  # fmt: skip
    s = _scan_brackets(buf, 1)
    assert s.pos.tolist() == [0, 17, 20, 29, 30, 31, 33, 41]
    assert s.depth.tolist() == [1, 2, 3, 4, 3, 2, 1, 2]  # nesting before each bracket


json_text = st.text(alphabet=st.sampled_from('ab"\\{}[]:,é\u2028 \n'), max_size=6)
leaves = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-1, 1), json_text)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_text, inner, max_size=3),
    max_leaves=8,
)
items = st.one_of(st.dictionaries(json_text, values, max_size=4), values)


@settings(max_examples=examples(150), derandomize=DERANDOMIZE, deadline=None)
@given(values, st.booleans())
def test_bracket_scan_equals_the_full_scans_brackets(value: Any, ascii_only: bool) -> None:
    buf = json.dumps(value, ensure_ascii=ascii_only).encode()
    full = _scan(buf, 3)
    brackets = np.isin(full.byte, BRACKETS)
    got = _scan_brackets(buf, 3)
    assert got.pos.tolist() == full.pos[brackets].tolist()
    assert got.byte.tolist() == full.byte[brackets].tolist()
    assert got.depth.tolist() == full.depth[brackets].tolist()


def _nesting(value: Any) -> int:
    """Levels of [ and { of a parsed value, counted by recursion (an object alone is 1)."""
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    return 0


@settings(
    max_examples=examples(150), derandomize=DERANDOMIZE, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(
    st.lists(items, max_size=12),
    st.sampled_from([",", ", ", ",\n", " ,\r\n  "]),
    st.booleans(),
    st.booleans(),
    st.integers(4, 200),
)
def test_streamed_events_are_the_documents_objects_in_any_chunks(
    evs: list, comma: str, wrapped: bool, ascii_only: bool, chunk: int
) -> None:
    body = comma.join(json.dumps(ev, ensure_ascii=ascii_only) for ev in evs)
    text = f'{{"a":"[{{","traceEvents":[{body}],"z":1}}' if wrapped else f"[{body}]"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.json"
        path.write_bytes(text.encode())
        stream = EventStream(path)
        got = [ev for part in read_events(path, stream, max_depth=3, chunk_bytes=chunk)
               for ev in part]  # fmt: skip
    # the oracle: the whole document parsed at once, its items sorted out by hand
    whole = json.loads(text)
    whole = whole["traceEvents"] if wrapped else whole
    objects = [ev for ev in whole if isinstance(ev, dict)]
    assert got == [ev for ev in objects if _nesting(ev) <= 3]
    expected = Counter()
    expected["not an object"] = len(whole) - len(objects)
    expected["nested deeper than 3 levels"] = sum(_nesting(ev) > 3 for ev in objects)
    assert stream.skipped == +expected
    assert stream.doc == ({"a": "[{", "traceEvents": [], "z": 1} if wrapped else {})


def test_an_event_spanning_many_chunks_is_scanned_a_few_times_not_once_per_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = {"ph": "X", "name": "big", "args": {"blob": "x{" * 200_000}}  # 400 kB, 400 chunks
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "i"}, big, {"ph": "i"}]}))
    scans = []
    real = json_events._scan_brackets
    monkeypatch.setattr(json_events, "_scan_brackets", lambda b, d: scans.append(1) or real(b, d))
    got = [ev for part in read_events(path, EventStream(path), chunk_bytes=1000) for ev in part]
    assert got == [{"ph": "i"}, big, {"ph": "i"}]
    assert len(scans) < 25  # the read doubles while the event is open: ~log2(400) scans
