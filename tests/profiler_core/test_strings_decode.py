"""Strings.decode of many ids at once (bytes gathered with numpy, cut once when ASCII) gives
what decoding each string on its own gives, for ASCII, other UTF-8, damaged bytes and -1."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.model.strings import Strings


def one_by_one(blob: bytes, offsets: np.ndarray, ids: np.ndarray) -> list[str]:
    """The reference: each string decoded alone, with replacement characters, "" for -1."""
    return [
        "" if i < 0 else str(blob[offsets[i] : offsets[i + 1]], "utf-8", "replace")
        for i in ids.tolist()
    ]


@pytest.mark.parametrize(
    "texts",
    [
        [f"layer{i % 7}/matmul{i}" for i in range(500)],  # ASCII
        [f"couche{i}/é→{i % 5}" for i in range(300)] + ["", "a"],  # other UTF-8, empty
    ],
)
def test_many_ids_decode_as_each_alone(texts):
    table = Strings.from_list(texts)
    rng = np.random.default_rng(7)
    ids = rng.integers(-1, len(texts), 1000)  # repeats, -1, any order
    blob = bytes(table.blob)
    assert table.decode(ids) == one_by_one(blob, table.offsets, ids)
    assert table.decode(ids[:10]) == one_by_one(blob, table.offsets, ids[:10])


def test_bytes_that_are_not_utf8_decode_with_replacement_as_alone():
    pieces = [b"ok", b"\xff\xfe", b"caf\xc3", b"\xa9tail", b"plain"] * 40
    offsets = np.concatenate(([0], np.cumsum([len(p) for p in pieces])))
    table = Strings(memoryview(b"".join(pieces)), offsets)
    ids = np.arange(len(pieces))[::-1].copy()
    got = table.decode(ids)
    assert got == one_by_one(b"".join(pieces), offsets, ids)
    assert got[-3] == "caf\ufffd"  # a character cut at the string's end is not mended
