"""Flow arrows of Chrome traces as Perfetto draws them (issue 38): the points of one flow
(``cat``, ``id``) are taken in time order whatever order the file lists them in -- Kineto
writes a kernel's ``f`` before its launch's ``s`` -- and spans marked with ``bind_id`` are
points too. What cannot be drawn (an end with no start, an end before its start, a start
with no end, an id started twice, an id in two categories) is counted and said.
Expected arrows are written by hand from each small trace below; the random case checks
against a brute-force oracle written here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from profiler_core.trace import import_chrome_file


def x(name: str, ts: float, dur: float, pid: int = 1, tid: int = 1, **more) -> dict:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, **more}


def flow(ph: str, id_: int | str, ts: float, pid: int = 1, tid: int = 1, cat: str = "ac2g",
         **more) -> dict:  # fmt: skip
    return {"ph": ph, "id": id_, "ts": ts, "pid": pid, "tid": tid, "cat": cat, "name": cat,
            **more}  # fmt: skip


def arrows(tmp_path: Path, events: list[dict], fast: bool = True):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = import_chrome_file(path, fast=fast)
    return trace, sorted((trace.label_of(a), trace.label_of(b)) for a, b in trace.flows.tolist())


# A Kineto-like step: the CPU thread (pid 100) runs an aten op that launches two kernels on
# the GPU stream (pid 0, tid 7); Kineto lists the kernels' "f" (bound to the kernel, "bp":
# "e") before the launches' "s", and a runtime call that launches nothing still gets an
# "f" of its own with no "s" (cudaStreamIsCapturing). The second kernel starts at the very
# microsecond of its launch: at one time stamp a flow starts before it ends.
KINETO = [
    x("aten::conv2d", 0, 100, pid=100, tid=100),
    x("cudaLaunchKernel", 10, 5, pid=100, tid=100),
    x("cudaLaunchKernel", 40, 5, pid=100, tid=100),
    x("cudaStreamIsCapturing", 60, 2, pid=100, tid=100),
    x("kernel_a", 30, 8, pid=0, tid=7),
    x("kernel_b", 40, 20, pid=0, tid=7),
    flow("f", 1, 30, pid=0, tid=7, bp="e"),
    flow("f", 2, 40, pid=0, tid=7, bp="e"),
    flow("f", 3, 60, pid=100, tid=100, bp="e"),
    flow("s", 1, 10, pid=100, tid=100),
    flow("s", 2, 40, pid=100, tid=100),
    flow("s", 4, 10, pid=100, tid=100),  # a launch whose kernel the trace lost
]


@pytest.mark.parametrize("fast", [True, False])
def test_kineto_kernel_ends_written_before_their_launches_are_matched_by_time(tmp_path, fast):
    trace, got = arrows(tmp_path, KINETO, fast)
    assert got == [("cudaLaunchKernel", "kernel_a"), ("cudaLaunchKernel", "kernel_b")]
    # each arrow leaves its own launch: the one at 10 µs for kernel_a, at 40 µs for kernel_b
    starts = sorted((int(trace.start_ns[a]), int(trace.start_ns[b])) for a, b in trace.flows)
    assert starts == [(10_000, 30_000), (40_000, 40_000)]
    assert trace.warnings == (
        "t.json: 1 event(s) skipped (1 flow steps or ends with no start)",
        "t.json: 1 flow(s) have a start and no end",
    )


def test_a_flow_written_backwards_chains_in_time_order(tmp_path):
    events = [
        x("send", 0, 10, tid=1),
        x("relay", 20, 10, tid=2),
        x("receive", 40, 10, tid=3),
        flow("f", 5, 35, tid=3, cat="ipc"),  # no "bp": the next span to begin on tid 3
        flow("t", 5, 25, tid=2, cat="ipc"),
        flow("s", 5, 5, tid=1, cat="ipc"),
    ]
    _, got = arrows(tmp_path, events)
    assert got == [("relay", "receive"), ("send", "relay")]


def test_a_point_binds_to_the_innermost_span_open_at_its_time(tmp_path):
    events = [
        x("outer", 0, 100, tid=1),
        x("middle", 10, 50, tid=1),
        x("done child", 12, 3, tid=1),  # ended before the point: not its span
        x("target", 200, 10, tid=2),
        flow("s", 1, 20, tid=1),  # inside outer and middle, after done child
        flow("f", 1, 205, tid=2, bp="e"),
        x("other outer", 300, 100, tid=1),
        x("child", 310, 10, tid=1),
        flow("s", 2, 350, tid=1),  # only other outer is still open
        flow("f", 2, 205, tid=2, bp="e"),  # ends before its start
    ]
    trace, got = arrows(tmp_path, events)
    assert got == [("middle", "target")]
    assert trace.warnings == (
        "t.json: 1 event(s) skipped (1 flow steps or ends before their start)",
        "t.json: 1 flow(s) have a start and no end",
    )


def test_bind_id_spans_start_step_and_end_a_flow(tmp_path):
    events = [
        x("consume", 40, 5, tid=3, bind_id=9, flow_in=True),
        x("relay", 20, 5, tid=2, bind_id=9, flow_in=True, flow_out=True),
        x("produce", 0, 5, tid=1, bind_id=9, flow_out=True),
    ]
    _, got = arrows(tmp_path, events)
    assert got == [("produce", "relay"), ("relay", "consume")]


def test_an_id_started_again_before_it_ended_is_said(tmp_path):
    events = [
        x("a", 0, 10, tid=1),
        x("b", 20, 10, tid=1),
        x("c", 40, 10, tid=2),
        flow("s", 1, 5, tid=1),
        flow("s", 1, 25, tid=1),  # the same id again: a new flow from b
        flow("f", 1, 45, tid=2, bp="e"),
        flow("f", 1, 46, tid=2, bp="e"),  # a second end: its flow had ended
    ]
    trace, got = arrows(tmp_path, events)
    assert got == [("b", "c")]
    assert trace.warnings == (
        "t.json: 1 event(s) skipped (1 flow steps or ends after their flow had ended)",
        "t.json: 1 flow id(s) started again before their flow ended",
    )


def test_one_id_in_two_categories_is_two_flows_and_said(tmp_path):
    events = [
        x("cpu", 0, 10, tid=1),
        x("gpu", 20, 10, tid=2),
        x("io", 40, 10, tid=3),
        flow("s", 7, 5, tid=1, cat="ac2g"),
        flow("s", 7, 5, tid=1, cat="io"),
        flow("f", 7, 25, tid=2, cat="ac2g", bp="e"),
        flow("f", 7, 45, tid=3, cat="io", bp="e"),
    ]
    trace, got = arrows(tmp_path, events)
    assert got == [("cpu", "gpu"), ("cpu", "io")]
    assert trace.warnings == ("t.json: 1 flow id(s) are used in more than one category "
                              "(matched per category)",)  # fmt: skip


def test_flow_events_that_cannot_be_read_are_skipped_and_counted(tmp_path):
    events = [
        x("a", 0, 10, tid=1),
        x("b", 20, 10, tid=2),
        flow("s", 1, 5, tid=1),
        flow("f", 1, 25, tid=2, bp="e"),
        {"ph": "s", "ts": 5, "pid": 1, "tid": 1},  # no id
        {"ph": "f", "id": [1], "ts": 5, "pid": 1, "tid": 1},  # an id that is no id
        {"ph": "t", "id": 1, "ts": "soon", "pid": 1, "tid": 1},
        flow("s", 2, 1e300, tid=1),  # out of range
        flow("s", 3, 15, tid=1),  # between spans: nothing to bind to
    ]
    trace, got = arrows(tmp_path, events)
    assert got == [("a", "b")]
    (skipped,) = trace.warnings
    assert skipped.startswith("t.json: 5 event(s) skipped (")
    for reason in ("flow event with no 'id'", "'id' is not an id", "'ts' is not a number",
                   "'ts' is out of range", "flow events with no span to bind to"):  # fmt: skip
        assert f"1 {reason}" in skipped


def _oracle(spans: list[tuple[int, int, int, str]], points: list[tuple]) -> list[tuple[str, str]]:
    """Arrows by brute force: each point's span by scanning every span of its thread; the
    points of each (cat, id) in time order (a start before a step before an end at one
    time), an end closing its flow."""

    def bind(tid: int, ts: int, enclosing: bool) -> str | None:
        mine = [s for s in spans if s[0] == tid]
        if enclosing:
            inside = [s for s in mine if s[1] <= ts <= s[2]]
            return max(inside, key=lambda s: (s[1], -s[2]))[3] if inside else None
        after = [s for s in mine if s[1] >= ts]
        return min(after, key=lambda s: (s[1], -s[2]))[3] if after else None

    out = []
    keys = sorted({p[0] for p in points})
    for key in keys:
        mine = sorted((p for p in points if p[0] == key), key=lambda p: (p[3], "stf".index(p[1])))
        last = None
        for _, ph, tid, ts, enclosing in mine:
            span = bind(tid, ts, enclosing or ph != "f")
            if span is None:
                continue
            if ph == "s":
                last = span
            elif last is not None:
                if last != span:
                    out.append((last, span))
                last = None if ph == "f" else span
    return sorted(out)


@pytest.mark.parametrize("seed", range(6))
def test_random_nested_spans_and_shuffled_flows_match_the_brute_force_oracle(tmp_path, seed):
    rng = np.random.default_rng(seed)
    spans, events = [], []
    for tid in range(1, 4):  # properly nested spans: a parent of children of grandchildren
        t = 0
        for p in range(12):
            p_start, p_end = t, t + 100
            spans.append((tid, p_start, p_end, f"p{tid}.{p}"))
            c = p_start + 5
            for k in range(int(rng.integers(0, 4))):
                c_end = c + int(rng.integers(5, 25))
                if c_end >= p_end:
                    break
                spans.append((tid, c, c_end, f"c{tid}.{p}.{k}"))
                if rng.random() < 0.5 and c_end - c > 4:
                    spans.append((tid, c + 1, c + 3, f"g{tid}.{p}.{k}"))
                c = c_end + int(rng.integers(0, 4))
            t = p_end + int(rng.integers(0, 20))
    horizon = max(s[2] for s in spans)
    sizes = rng.integers(2, 5, 60)  # flows of 2 to 4 points, some with ends before starts
    # distinct times: the order of one flow's points never rests on a tie
    all_times = rng.choice(horizon, int(sizes.sum()), replace=False)
    points = []
    for k, n in enumerate(sizes.tolist()):
        times = np.sort(all_times[:n])
        all_times = all_times[n:]
        for j, ts in enumerate(times.tolist()):
            ph = "s" if j == 0 else "f" if j == n - 1 else "t"
            if rng.random() < 0.1:
                ph = "stf"[int(rng.integers(0, 3))]
            enclosing = ph != "f" or bool(rng.random() < 0.5)
            points.append((("c", k % 45), ph, int(rng.integers(1, 4)), ts, enclosing))
    for tid, s, e, name in spans:
        events.append(x(name, s, e - s, tid=tid))
    for (cat, id_), ph, tid, ts, enclosing in points:
        events.append(flow(ph, id_, ts, tid=tid, cat=cat, **({"bp": "e"} if enclosing else {})))
    order = rng.permutation(len(events))  # any file order
    _, got = arrows(tmp_path, [events[i] for i in order])
    assert got == _oracle(spans, points)
