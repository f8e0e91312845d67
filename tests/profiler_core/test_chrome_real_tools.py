"""Traces written by real tools open with every event: viztracer traces a threaded program
with counters and instants, and the System Trace model holds exactly what its JSON holds,
counted independently from the JSON itself."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter

from profiler_core.formats.pvti import EventKind
from profiler_core.trace import open_trace

PROGRAM = textwrap.dedent(
    """
    import sys, threading
    from viztracer import VizTracer

    tracer = VizTracer(output_file=sys.argv[1], verbose=0)
    tracer.start()

    def work(n):
        return sum(i * i for i in range(n))

    def worker(k):
        for j in range(3):
            work(200)
            tracer.log_instant(f"done {k}.{j}", args={"k": k}, scope="t")

    threads = [threading.Thread(target=worker, args=(k,), name=f"worker{k}") for k in range(3)]
    for t in threads:
        t.start()
    for i in range(5):
        tracer.add_counter("queue", {"depth": i, "free": 10 - i})
    for t in threads:
        t.join()
    tracer.stop()
    tracer.save()
    """
)


def test_a_viztracer_trace_of_threads_counters_and_instants_opens_with_every_event(tmp_path):
    path = tmp_path / "viz.json"
    script = tmp_path / "traced.py"
    script.write_text(PROGRAM)
    subprocess.run([sys.executable, str(script), str(path)], check=True, timeout=120)
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    spans = Counter(names[e["tid"]] for e in events if e["ph"] == "X")
    instants = Counter(names[e["tid"]] for e in events if e["ph"] == "i")
    samples = Counter(k for e in events if e["ph"] == "C" for k in e["args"])
    assert sum(instants.values()) == 9 and samples == {"depth": 5, "free": 5}

    trace = open_trace(path)
    assert trace.warnings == ()
    got_spans = Counter(trace.threads[t].name for t in trace.thread[trace.kind == EventKind.SPAN])
    got_instants = Counter(
        trace.threads[t].name for t in trace.thread[trace.kind == EventKind.INSTANT]
    )
    assert got_spans == spans and got_instants == instants
    assert {k: len(t) for k, (t, _) in trace.series["queue"].items()} == samples
    assert trace.series["queue"]["free"][1].tolist() == [10.0, 9.0, 8.0, 7.0, 6.0]
    first = min(e["ts"] for e in events if e["ph"] in "Xi")
    span = next(e for e in events if e["ph"] == "X" and e["ts"] == first)
    i = int(trace.start_ns.argmin())
    assert trace.label_of(i) == span["name"]
    assert abs(int(trace.end_ns[i] - trace.start_ns[i]) - span["dur"] * 1000) < 1
