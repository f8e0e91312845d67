"""The importer sorts the events once, where they are, in the order the nesting walk takes
them (thread, start, longest first); each event keeps its own args and flow arrows through
that sort, on both paths. Expected values come from the JSON written here."""

from __future__ import annotations

import json
import random

import pytest

from profiler_core.trace import import_chrome_file


def shuffled_trace(path, seed: int) -> list[dict]:
    """Nested X spans on three threads, written in a shuffled order, every one with args
    naming it; spans 'p<k>' carry bind_id flows out, 'c<k>' flows in."""
    rng = random.Random(seed)
    events = []
    for tid in (1, 2, 3):
        for k in range(40):
            base = k * 1000
            events.append({"ph": "X", "name": f"p{tid}.{k}", "pid": 7, "tid": tid, "ts": base,
                           "dur": 900, "args": {"who": f"p{tid}.{k}"}})  # fmt: skip
            events.append({"ph": "X", "name": f"c{tid}.{k}", "pid": 7, "tid": tid,
                           "ts": base + 100, "dur": 300, "args": {"who": f"c{tid}.{k}"}})  # fmt: skip
    for k in range(40):  # a flow from thread 1's parent k to thread 2's child k
        events[2 * k]["bind_id"] = k
        events[2 * k]["flow_out"] = True
        events[80 + 2 * k + 1]["bind_id"] = k
        events[80 + 2 * k + 1]["flow_in"] = True
    rng.shuffle(events)
    path.write_text(json.dumps({"traceEvents": events}))
    return events


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("seed", [1, 2])
def test_args_and_flows_follow_their_events_through_the_sort(tmp_path, seed, fast):
    events = shuffled_trace(tmp_path / "t.json", seed)
    trace = import_chrome_file(tmp_path / "t.json", fast=fast)
    assert len(trace) == len(events) == 240
    for row in range(len(trace)):
        assert json.loads(trace.args[row]) == {"who": trace.label_of(row)}
    by_name = {ev["name"]: ev for ev in events}
    for row in range(len(trace)):
        ev = by_name[trace.label_of(row)]
        assert int(trace.start_ns[row]) == ev["ts"] * 1000
        assert int(trace.depth[row]) == (1 if ev["name"].startswith("c") else 0)
    arrows = sorted((trace.label_of(a), trace.label_of(b)) for a, b in trace.flows.tolist())
    assert arrows == sorted((f"p1.{k}", f"c2.{k}") for k in range(40))
    # sorted by thread, then start: each thread's events in time order
    for t in range(len(trace.threads)):
        starts = trace.start_ns[trace.thread_slice(t)]
        assert (starts[1:] >= starts[:-1]).all()
