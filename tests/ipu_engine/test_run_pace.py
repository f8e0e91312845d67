"""A program's run shares its compute sets' work between cores or runs on one, by how long
each way has taken lately (``run_pace``): fed run times by hand, it shares until one core
is measured faster, leaves sharing only when several runs say so (not for one outlier),
measures the other way again on schedule and goes back when that is faster again; within
a run on one core every team plan is given one thread (``workers.alone``), and an engine's
runs go through their program's pace."""

from __future__ import annotations

import time

import numpy as np
import pytest

from benchmarks.bench_depthwise import mobilenet_block
from ipu_engine.codelets import team
from ipu_engine.onnx import InferenceSession
from ipu_engine.poplar import run_pace, workers
from ipu_engine.poplar.run_pace import RunPace
from tests.ipu_engine.test_repeat import CHANNELS, SIZE

EVERY = run_pace.PROBE_EVERY


def _runs(p: RunPace, count: int, shared_ms: float, alone_ms: float) -> list[bool]:
    """``count`` runs of ``shared_ms`` shared or ``alone_ms`` alone: which way each went."""
    ways = []
    for _ in range(count):
        shared = p.shared()
        p.took(shared, (shared_ms if shared else alone_ms) * 1e-3)
        ways.append(shared)
    return ways


def test_it_shares_while_sharing_is_faster_probing_one_core_on_schedule() -> None:
    p = RunPace()
    ways = _runs(p, 3 * EVERY, shared_ms=0.5, alone_ms=0.9)
    assert [i for i, shared in enumerate(ways) if not shared] == [
        EVERY - 1,
        2 * EVERY - 1,
        3 * EVERY - 1,
    ]
    assert p.shared_seconds == pytest.approx(0.5e-3) and p.alone_seconds == pytest.approx(0.9e-3)


def test_the_first_runs_are_not_counted() -> None:
    p = RunPace()
    for seconds in (2.0, 1.0):  # plans made, views found
        p.took(p.shared(), seconds)
    assert p.shared_seconds is None
    p.took(p.shared(), 0.5e-3)
    assert p.shared_seconds == pytest.approx(0.5e-3)


def test_one_slow_run_does_not_leave_sharing_several_do() -> None:
    p = RunPace()
    _runs(p, EVERY, shared_ms=0.5, alone_ms=0.9)  # one core measured once
    assert p.shared()
    p.took(True, 5e-3)  # an interrupt: counted as twice the mean
    assert p.shared_seconds == pytest.approx(0.5e-3 + run_pace.WEIGHT * 0.5e-3)
    ways = _runs(p, 8, shared_ms=1.5, alone_ms=0.9)  # the host runs both cores as one
    assert ways[0] and not any(ways[-4:])


def test_after_a_slow_phase_the_next_probe_brings_sharing_back() -> None:
    p = RunPace()
    _runs(p, EVERY, shared_ms=0.5, alone_ms=0.9)
    ways = _runs(p, EVERY, shared_ms=1.5, alone_ms=0.9)  # a slow phase: one core
    assert not any(ways[8:-1]) and ways[-1]  # one core, but for the probe (still slow)
    ways = _runs(p, 2 * EVERY, shared_ms=0.5, alone_ms=0.9)  # it ends
    assert not any(ways[: EVERY - 1])  # one core until the next probe ...
    assert all(ways[EVERY - 1 : -1]) and not ways[-1]  # ... then shared (the last: a probe)


def test_within_alone_this_thread_gives_work_to_one_core(monkeypatch) -> None:
    monkeypatch.setattr(workers, "_SEEN", [time.monotonic() + 1e9, 0.0, None, 2])  # 2 free
    assert workers.cores() == 2
    with workers.alone():
        assert workers.cores() == 1
        with workers.alone():
            assert workers.cores() == 1
        assert workers.cores() == 1
    assert workers.cores() == 2
    seen = []
    p = RunPace()
    p.alone_seconds, p.shared_seconds, p.runs = 1.0, 2.0, run_pace.WARMUP  # one core faster
    p.run(lambda: seen.append(workers.cores()))
    p.alone_seconds, p.shared_seconds = 2.0, 1.0  # sharing faster
    p.run(lambda: seen.append(workers.cores()))
    assert seen == [1, 2]


def test_an_engines_runs_give_its_team_plans_the_threads_its_pace_says(monkeypatch) -> None:
    monkeypatch.setattr(workers, "_SEEN", [time.monotonic() + 1e9, 0.0, None, 2])  # 2 free
    threads = []
    real = team.TeamPieces.run

    def run(self, count, others=()):
        threads.append(count)
        real(self, count, others)

    monkeypatch.setattr(team.TeamPieces, "run", run)
    session = InferenceSession(mobilenet_block(CHANNELS, SIZE))
    x = np.random.default_rng(5).standard_normal((1, CHANNELS, SIZE, SIZE)).astype(np.float32)
    want = [session.run(None, {"x": x})[0] for _ in range(3)][-1]
    pace = session.last.engine._paces[0]
    assert pace.runs == 3  # every run went through the program's pace
    for alone, expected in ((False, 2), (True, 1), (False, 2)):
        pace.alone_seconds, pace.shared_seconds = (1.0, 2.0) if alone else (2.0, 1.0)
        pace.runs, threads[:] = 3, []
        (got,) = session.run(None, {"x": x})
        assert threads and set(threads) == {expected}
        assert np.array_equal(got, want)
