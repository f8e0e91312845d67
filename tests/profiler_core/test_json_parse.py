"""The chunk parser gives what ``json.loads`` gives, whichever parser reads the chunk: the
native one where it agrees, the standard library where orjson would refuse or differ."""

from __future__ import annotations

import json
import math

import pytest

from profiler_core.trace import json_parse

CASES = [
    b'[{"ph":"X","ts":1.5,"dur":2,"name":"a","args":{"k":[1,2.25,null,true]}}]',
    b"[99999999999999999999, -99999999999999999999123]",  # past 64 bits: kept exact
    b"[18446744073709551615, -9223372036854775808, -0, 1E2, 1e-7]",
    b'[{"a":1,"a":2}]',  # the last of a repeated key, as json.loads keeps it
    b"[NaN, Infinity, -Infinity]",  # Python's extensions of JSON
    b'["\\ud800", "\\u00e9", "caf\xc3\xa9"]',  # a lone surrogate, escapes, raw UTF-8
    b'[{"name":"12345678901234567890"}]',  # 20 digits in a string: read either way
]


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("text", CASES)
def test_loads_gives_what_json_loads_gives(text: bytes) -> None:
    assert _same(json_parse.loads(text), json.loads(text))


@pytest.mark.parametrize("text", [b"[1,", b"[\xff]", b'{"a":}'])
def test_what_json_loads_refuses_is_refused_as_a_value_error(text: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        json_parse.loads(text)


def test_without_orjson_the_standard_library_reads_every_chunk(monkeypatch) -> None:
    monkeypatch.setattr(json_parse, "orjson", None)
    assert json_parse.loads(CASES[1]) == [99999999999999999999, -99999999999999999999123]
