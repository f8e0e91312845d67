"""Whether a program's run shares its compute sets' work between cores or runs on one,
chosen by how long each way has taken lately.

On this kind of machine (two virtual cores) the host sometimes runs the two cores as if on
one, for seconds or minutes at a time: then two busy threads each run at a fraction of
their speed. The MobileNet block (``benchmarks/bench_depthwise``), 40 runs each way in
turn: 0.55-0.60 ms a run shared and 0.85-0.89 on one thread in most samples; in such phases
1.33-1.55 ms shared and still 0.84-0.92 on one (onnxruntime 0.18 ms, there 0.30). Nothing
the machine says tells the phases apart, so each program keeps the mean seconds of its
recent runs each way, runs the faster way, and every ``PROBE_EVERY`` runs goes the other
way once to see whether that has changed. A whole run is the unit: a single compute set
run alone while the others share was measured as slow as shared (the helper working beside
it), so choosing per compute set never found the gain.

A run far slower than its way's mean (an interrupt, a page fault) counts as ``OUTLIER``
times the mean: one such run does not turn a program away from sharing, several do. The
first ``WARMUP`` runs (plans made, views found) are not counted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from ipu_engine.poplar import workers

#: Every this many runs of a program, one goes the other way, to measure it again.
PROBE_EVERY = 32
#: Weight of the newest run in its way's mean (an exponentially weighted mean).
WEIGHT = 0.25
#: A run counts as at most this many times its way's mean.
OUTLIER = 2.0
#: Runs not counted at first: the first runs make the plans the next ones keep.
WARMUP = 2


class RunPace:
    """One program's recent run seconds shared and on one core; ``run`` runs the next."""

    __slots__ = ("alone_seconds", "probe", "runs", "shared_seconds")

    def __init__(self) -> None:
        self.shared_seconds: float | None = None
        self.alone_seconds: float | None = None
        self.runs = 0
        self.probe = False  # whether the run under way goes the other way, to measure it

    def run(self, fn: Callable[[], None]) -> None:
        """``fn()`` shared or on one core (``workers.alone``), as ``shared`` says."""
        shared = self.shared()
        started = time.perf_counter()
        with contextlib.nullcontext() if shared else workers.alone():
            fn()
        self.took(shared, time.perf_counter() - started)

    def shared(self) -> bool:
        """Whether the next run is shared: the faster way, or the other way once every
        ``PROBE_EVERY`` runs. Shared until alone has been measured."""
        self.runs += 1
        faster = self.alone_seconds is None or (
            self.shared_seconds is not None and self.shared_seconds <= self.alone_seconds
        )
        self.probe = self.runs % PROBE_EVERY == 0
        return faster != self.probe

    def took(self, shared: bool, seconds: float) -> None:
        """A run's seconds, shared or alone: into the mean of the way runs go; a probe's,
        as that way's seconds now (a mean of probes ``PROBE_EVERY`` runs apart would
        trail a change of phase by several probes)."""
        if self.runs <= WARMUP:
            return
        if shared:
            self.shared_seconds = self._mean(self.shared_seconds, seconds)
        else:
            self.alone_seconds = self._mean(self.alone_seconds, seconds)

    def _mean(self, mean: float | None, seconds: float) -> float:
        if mean is None or self.probe:
            return seconds
        return mean + WEIGHT * (min(seconds, OUTLIER * mean) - mean)
