"""The System Trace's lanes of a big nested trace hold no copy of the Trace's columns
(issue 28): drawing every lane of an imported 200k-event trace costs about the lanes'
4-byte indexes, not the 24 bytes a span that copies of the starts and ends (with an int64
index) took -- measured with tracemalloc against the columns' bytes from their dtypes."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np

from popvision_py.viewmodels.system_trace import SystemTraceModel
from profiler_core.analysis.indexed_lane import IndexedLane
from profiler_core.analysis.trace_lanes import lane_window
from profiler_core.trace import import_chrome_file


def _write_nested_json(path, n_events: int, threads: int = 4) -> None:
    """Chrome X events: per thread, a parent of 9 children, as a profiler writes them."""
    events = []
    for i in range(n_events):
        tid, k = i % threads, i // threads
        parent, child = divmod(k, 10)
        ts = parent * 100 + (child * 9 if child else 0)
        events.append({"ph": "X", "name": f"op{i % 50}", "cat": "cpu", "pid": 1, "tid": tid,
                       "ts": ts, "dur": 95 if child == 0 else 8})  # fmt: skip
    path.write_text(json.dumps({"traceEvents": events}))


def test_drawing_every_lane_of_a_200k_event_import_copies_no_column(tmp_path) -> None:
    n = 200_000
    _write_nested_json(tmp_path / "t.json", n)
    trace = import_chrome_file(tmp_path / "t.json")
    assert len(trace) == n and int(trace.depth.max()) == 1
    # the columns' bytes from their dtypes: two int64 times, four int32 columns, a uint8
    columns = n * (8 + 8 + 4 + 4 + 4 + 4 + 1)
    tracemalloc.start()
    try:
        model = SystemTraceModel(trace)
        lanes = [row.lane for row in model.rows]
        x0, x1 = trace.time_range()
        drawn = [lane_window(lane, x0, x1, 1400) for lane in lanes]
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(lanes) == 8 and all(len(d) for d in drawn)
    assert sum(len(lane) for lane in lanes) == n
    # 9 of 10 spans are children: copied starts, ends and int64 indexes would hold 24 bytes
    # each (held ~0.73x the columns, peak ~0.88x); their int32 indexes hold 4 (~0.12x; the
    # peak ~0.44x is the layout's lane counts, made a block of events at a time)
    assert held <= 0.15 * columns, held / columns
    assert peak <= 0.6 * columns, peak / columns
    for lane in lanes:
        if isinstance(lane, IndexedLane):
            assert lane.starts is trace.start_ns and lane.ends is trace.end_ns
        else:  # the parents' lanes: views of the columns, no copies
            assert np.shares_memory(lane.start, trace.start_ns)
            assert np.shares_memory(lane.end, trace.end_ns)
