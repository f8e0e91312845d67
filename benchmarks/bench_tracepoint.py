"""Tracepoint hot-path benchmark (issue 42): a traced ``with Tracepoint(channel, label)``
and an ``@instrument_fn`` call beside an empty context manager, a plain call and viztracer's
``log_event``, all measured in one run, interleaved round by round, best of the rounds.

Targets: the traced ``with`` <= 3x the empty context manager (made per ``with``, as the
Tracepoint is) and <= 0.3x viztracer's ``log_event``. The pvti flusher commits in the
background meanwhile, and each round ends with a flush, so its work is in the time too.

Run with ``python -m benchmarks.bench_tracepoint [--iterations N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import ipu_engine.pvti as pvti
from benchmarks._timing import EmptyContext, report
from profiler_core.formats.pvti import read_pvti

EMPTY_RATIO = 3.0
VIZTRACER_RATIO = 0.3


def _per_iteration(loop: Callable[[int], None], n: int) -> float:
    start = time.perf_counter_ns()
    loop(n)
    return (time.perf_counter_ns() - start) / n


def _empty(n: int) -> None:
    for _ in range(n):
        with EmptyContext(None, "step"):
            pass


def _traced(channel: pvti.TraceChannel) -> Callable[[int], None]:
    tracepoint = pvti.Tracepoint

    def loop(n: int) -> None:
        for _ in range(n):
            with tracepoint(channel, "step"):
                pass

    return loop


def _plain_call(n: int) -> None:
    def step() -> None:
        return None

    for _ in range(n):
        step()


def _instrumented(channel: pvti.TraceChannel) -> Callable[[int], None]:
    @pvti.instrument_fn(channel)
    def step() -> None:
        return None

    def loop(n: int) -> None:
        for _ in range(n):
            step()

    return loop


def _viztracer(directory: Path) -> tuple[Callable[[int], None], object] | None:
    try:
        from viztracer import VizTracer
    except ImportError:
        return None
    tracer = VizTracer(output_file=str(directory / "viz.json"), verbose=0,
                       tracer_entries=4_000_000)  # fmt: skip

    def loop(n: int) -> None:
        log_event = tracer.log_event
        tracer.start()  # log_event records while the tracer runs, as its docs use it
        for _ in range(n):
            with log_event("step"):
                pass
        tracer.stop()
        tracer.clear()

    return loop, tracer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    n = args.iterations
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        pvti.enable(directory / "pvti")
        channel = pvti.createTraceChannel("bench")
        writer = pvti.current_writer()
        assert writer is not None
        loops: dict[str, Callable[[int], None]] = {
            "empty context manager": _empty,
            "traced with": _traced(channel),
            "plain call": _plain_call,
            "instrument_fn call": _instrumented(channel),
        }
        viz = _viztracer(directory)
        if viz is not None:
            loops["viztracer log_event"] = viz[0]
        best = dict.fromkeys(loops, float("inf"))
        for _ in range(args.rounds):  # interleaved: the machine's load hits every loop alike
            for name, loop in loops.items():
                best[name] = min(best[name], _per_iteration(loop, n))
                writer.flush()
        pvti.disable()
        written = len(read_pvti(writer.path).events["start_ns"])
    print(f"tracepoints, {n:,} iterations x {args.rounds} rounds interleaved, best of the "
          f"rounds ({written:,} events written):")  # fmt: skip
    for name, ns in best.items():
        print(f"    {name:<24} {ns:8.0f} ns")
    ratio = best["traced with"] / best["empty context manager"]
    report("tracepoint: traced with / empty context manager", ratio, "x",
           f"<= {EMPTY_RATIO}", ratio <= EMPTY_RATIO)  # fmt: skip
    calls = best["instrument_fn call"] / best["plain call"]
    print(f"    instrument_fn call / plain call: {calls:.1f}x")
    if viz is not None:
        ratio = best["traced with"] / best["viztracer log_event"]
        report("tracepoint: traced with / viztracer log_event", ratio, "x",
               f"<= {VIZTRACER_RATIO}", ratio <= VIZTRACER_RATIO)  # fmt: skip
    else:
        print("    viztracer is not installed: its ratio is not measured")


if __name__ == "__main__":
    main()
