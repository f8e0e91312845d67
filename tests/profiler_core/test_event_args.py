"""EventArgs (an imported trace's args kept as one joined text) reads as the dict of the
same texts would: get, [], in, len, iteration in event order, equality with a dict."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from profiler_core.trace.event_args import EventArgs


def test_eventargs_reads_as_the_dict_of_its_texts():
    rng = random.Random(4)
    expected: dict[int, str] = {}
    parts = []
    events = rng.sample(range(10_000), 900)
    for lo in range(0, 900, 200):  # parts in any event order, as chunks come
        chunk = events[lo : lo + 200]
        texts = [json.dumps({"seq": e, "s": "é" * rng.randint(0, 3)}) for e in chunk]
        expected.update(zip(chunk, texts, strict=True))
        parts.append((np.array(chunk), [len(t) for t in texts], "".join(texts)))
    args = EventArgs.joined(parts)
    assert len(args) == 900 and args == expected and expected == args
    assert list(args) == sorted(expected)
    for e in range(0, 10_000, 7):
        assert args.get(e) == expected.get(e)
        assert (e in args) == (e in expected)
    assert args[events[0]] == expected[events[0]]
    with pytest.raises(KeyError):
        args[-1]
    assert "1" not in args and 1.5 not in args


def test_two_texts_for_one_event_are_refused():
    with pytest.raises(ValueError, match="two args"):
        EventArgs.joined([(np.array([3, 3]), [2, 2], "{}{}")])


def test_no_args():
    args = EventArgs.joined([])
    assert len(args) == 0 and args == {} and args.get(0) is None
