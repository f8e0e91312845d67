"""The tracepoints' native hot path (issue 42): the C types are what the package uses, and
what they write is what was traced -- labels, nesting, threads, and timestamps inside the
bounds the test itself measures around each span -- also deep, across threads and at exit."""

from __future__ import annotations

import gc
import importlib.machinery
import os
import subprocess
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest

import ipu_engine.pvti as pvti
from ipu_engine.pvti import _tracepoint
from ipu_engine.pvti.session import session, thread_stack
from profiler_core.formats.pvti import EventKind, _ring, read_pvti
from profiler_core.formats.pvti.ring import RecordRing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def channel(tmp_path: Path):
    pvti.enable(tmp_path)
    yield pvti.createTraceChannel("native")
    pvti.disable()


def _events(path: Path) -> list[tuple[str, int, int, int, int, int | None]]:
    """(label, depth, kind, start_ns, end_ns, os_tid) of every event, in the order written."""
    contents = read_pvti(path)
    ev = contents.events
    return [
        (contents.labels[int(lab)], int(d), int(k), int(s), int(e),
         contents.threads[int(t)].os_tid)
        for lab, d, k, s, e, t in zip(ev["label"], ev["depth"], ev["kind"], ev["start_ns"],
                                      ev["end_ns"], ev["thread"], strict=True)
    ]  # fmt: skip


def _is_extension(module: types.ModuleType) -> bool:
    return module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_the_package_traces_through_the_compiled_modules(channel) -> None:
    assert _is_extension(_tracepoint) and _is_extension(_ring)
    # the with statement's methods are C's, not Python functions of a twin
    for name in ("__enter__", "__exit__", "__new__"):
        method = getattr(pvti.Tracepoint, name)
        assert not isinstance(method, types.FunctionType), name
        assert method is getattr(_tracepoint.TracepointBase, name)
    assert isinstance(pvti.current_writer().ring, _ring.RingBase)
    assert isinstance(channel, _tracepoint.ChannelBase)
    assert isinstance(thread_stack(), _tracepoint.ThreadStack)


def test_spans_are_written_as_traced_within_the_times_measured_around_them(channel) -> None:
    labels = ["load", "step", "save"]
    tracepoints = [pvti.Tracepoint(channel, label) for label in labels]
    bounds = []  # (label, depth, before enter, after exit), in the order the spans end
    for i in range(300):
        outer = tracepoints[i % 3]
        before_outer = time.monotonic_ns()
        with outer:
            before_inner = time.monotonic_ns()
            with pvti.Tracepoint(channel, f"inner {i % 7}"):
                pass
            after_inner = time.monotonic_ns()
        after_outer = time.monotonic_ns()
        bounds += [(f"inner {i % 7}", 1, before_inner, after_inner),
                   (labels[i % 3], 0, before_outer, after_outer)]  # fmt: skip
    path = pvti.current_trace_path()
    pvti.disable()
    written = _events(path)
    assert [(label, depth) for label, depth, *_ in written] == [(b[0], b[1]) for b in bounds]
    tid = threading.get_native_id()
    for (_, _, kind, start, end, os_tid), (_, _, before, after) in zip(written, bounds,
                                                                       strict=True):  # fmt: skip
        assert kind == EventKind.SPAN and os_tid == tid
        assert before <= start <= end <= after


def test_spans_nested_deeper_than_the_first_stack_are_kept(channel) -> None:
    depth = 200  # the thread's C arrays start at 32 entries and grow

    def recurse(level: int) -> None:
        if level < depth:
            with pvti.Tracepoint(channel, f"level {level}"):
                recurse(level + 1)

    recurse(0)
    pvti.Tracepoint.event(channel, "after")
    path = pvti.current_trace_path()
    pvti.disable()
    written = [(label, d, k) for label, d, k, *_ in _events(path)]
    span = int(EventKind.SPAN)
    expected = [(f"level {k}", k, span) for k in reversed(range(depth))]
    assert written == expected + [("after", 0, int(EventKind.INSTANT))]


def test_each_thread_writes_its_own_tid_and_its_stack_goes_with_it(channel) -> None:
    tids: dict[str, int] = {}

    def work(name: str) -> None:
        tids[name] = threading.get_native_id()
        for _ in range(500):
            with pvti.Tracepoint(channel, name), pvti.Tracepoint(channel, name + " in"):
                pvti.Tracepoint.event(channel, name + " flag")

    threads = [threading.Thread(target=work, args=(f"t{k}",), name=f"t{k}") for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    # a finished thread's stack is dropped with its thread state (weakly listed)
    assert not set(tids.values()) & set(session.stacks.keys())
    path = pvti.current_trace_path()
    pvti.disable()
    seen: dict[str, set] = {}
    for label, depth, kind, _, _, os_tid in _events(path):
        name = label.split()[0]
        assert os_tid == tids[name]
        seen.setdefault(name, set()).add((label, depth, kind))
    span, instant = int(EventKind.SPAN), int(EventKind.INSTANT)
    for name in tids:
        assert seen[name] == {(name, 0, span), (name + " in", 1, span),
                              (name + " flag", 2, instant)}  # fmt: skip


def test_a_record_put_from_python_is_taken_back_as_written() -> None:
    relieved = []
    ring = RecordRing(100, lambda: relieved.append(ring.claimed))
    for k in range(150):
        ring.put(1000 + k, 2000 + k, 7, 2 * k, k % 5)
    records = ring.take()
    assert records["start_ns"].tolist() == [1000 + k for k in range(150)]
    assert records["end_ns"].tolist() == [2000 + k for k in range(150)]
    assert set(records["tid"].tolist()) == {7}
    assert records["point"].tolist() == [2 * k for k in range(150)]
    assert records["depth"].tolist() == [k % 5 for k in range(150)]
    # the 101st record and each after it (nothing taken meanwhile) asked to be relieved
    assert relieved == [64 * k for k in range(101, 151)]
    assert len(ring.take()) == 0
    with pytest.raises(OverflowError):
        ring.put(0, 0, 0, 1 << 40, 0)


def test_every_span_of_a_process_that_just_exits_is_in_its_file(tmp_path: Path) -> None:
    n = 50_000  # more than a ring: the recording thread and the flusher both commit
    child = textwrap.dedent(
        f"""
        import ipu_engine.pvti as pvti
        channel = pvti.createTraceChannel("exit")
        step = pvti.Tracepoint(channel, "step")
        for _ in range({n}):
            with step:
                pass
        with pvti.Tracepoint(channel, "last"):
            pvti.Tracepoint.event(channel, "flag")
        """
    )  # no closeTrace: the writer commits the rest at exit
    env = {**os.environ, "PVTI_OPTIONS": f'{{"enable":"true","directory":"{tmp_path}"}}'}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    subprocess.run([sys.executable, "-c", child], env=env, check=True, timeout=120)
    (path,) = tmp_path.glob("*.pvti")
    written = [(label, depth, kind) for label, depth, kind, *_ in _events(path)]
    span, instant = int(EventKind.SPAN), int(EventKind.INSTANT)
    assert written == [("step", 0, span)] * n + [("flag", 1, instant), ("last", 0, span)]
