"""Lightweight profiling's cost (issue 43): the engine's run time with it on over it off, on
the tutorial programs -- Poplar's tutorials 1, 2, 4 and 6 (every program timed:
``profiler.programs.filter`` ".*", the most marks there can be) and the PopVision
lightweight-profiling tutorial's three examples (their own filters) -- measured side by side.

Each program is compiled twice, as its script does, with lightweight profiling on and off;
both keep every run (``autoReport.executionProfileProgramRunCount``), so each timed run pays
for recording its blocks. Runs are timed in batches of ~20 ms, each ending with
``engine.profile()`` (what writing a report asks: with it on, the batch's blocks are
decoded then), alternating on and off; the median batch of each is compared. Times are the
process's CPU time: the machine is shared, and wall time there measures the neighbours.

    python -m benchmarks.bench_lightweight_profiling
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import statistics
import sys
import time
from pathlib import Path

from benchmarks._timing import report
from ipu_engine import Engine
from tests.lightweight_reports import example

EXAMPLES = Path(__file__).resolve().parents[1] / "resources" / "examples"
POPLAR_TUTORIALS = (
    ("tutorial 1 (variables, FIFOs)", "tutorial1_variables.py", []),
    ("tutorial 2 (popops)", "tutorial2_popops.py", []),
    ("tutorial 4 (matmul)", "tutorial4_matmul.py", []),
    ("tutorial 6 (matrix-vector 2000x500)", "tutorial6_matrix_vector.py", ["2000", "500"]),
)
EVERY_PROGRAM = {"profiler.programs.filter": ".*"}
KEEP = 10_000  # runs of each program kept: every timed run records its blocks
BATCHES = 31
TARGET = 1.05


def _engine_of_script(script: str, argv: list[str], options: dict[str, object]) -> Engine:
    """Run a tutorial script as a user would, with ``options`` added to each Engine it
    makes; its (last) engine, loaded, ready to run again."""
    made: list[Engine] = []
    original = Engine.__init__

    def with_options(self, graph, programs, given=None, **kwargs):
        original(self, graph, programs, {**(given or {}), **options}, **kwargs)
        made.append(self)

    Engine.__init__ = with_options  # type: ignore[method-assign]
    old_argv = sys.argv
    try:
        sys.argv = [script, *argv]
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    finally:
        Engine.__init__ = original  # type: ignore[method-assign]
        sys.argv = old_argv
    engine = made[-1]
    engine.set_print_stream(io.StringIO())
    return engine


def _engine_of_example(name: str, on: bool) -> Engine:
    module = example()
    device_ipus = 2 if name == "pipeline" else 1
    from ipu_engine import IPUModel

    device = IPUModel("ipu2", num_ipus=device_ipus, tiles_per_ipu=module.TILES_PER_IPU)
    device = device.create_device()
    graph, program, options = module.EXAMPLES[name](device)
    keep = {"autoReport.executionProfileProgramRunCount": KEEP}
    engine = Engine(graph, program, {**(options if on else {}), **keep})
    engine.load(device)
    if name == "streamed":
        import numpy as np

        engine.connect_stream("in", np.zeros(1, dtype=np.int32))
    return engine


def _batch_size(engine: Engine) -> int:
    """Runs per batch: enough for ~20 ms of CPU, so a batch is not timer noise."""
    t0 = time.process_time()
    engine.run(0)
    one = max(time.process_time() - t0, 1e-6)
    return max(1, min(200, int(0.02 / one)))


def _compare(off: Engine, on: Engine) -> tuple[float, float]:
    runs = _batch_size(off)
    times: dict[bool, list[float]] = {False: [], True: []}
    for batch in range(BATCHES * 2):
        lightweight = batch % 2 == 1
        engine = on if lightweight else off
        t0 = time.process_time()
        for _ in range(runs):
            engine.run(0)
        engine.profile()  # the report's data: with LWP on, the batch's blocks are decoded
        times[lightweight].append((time.process_time() - t0) / runs)
    return statistics.median(times[False]), statistics.median(times[True])


def main() -> None:
    os.environ.pop("POPLAR_ENGINE_OPTIONS", None)
    keep = {"autoReport.executionProfileProgramRunCount": KEEP}
    cases = []
    for label, script, argv in POPLAR_TUTORIALS:
        off = _engine_of_script(script, argv, keep)
        on = _engine_of_script(script, argv, {**keep, **EVERY_PROGRAM})
        cases.append((label, off, on))
    for name in example().EXAMPLES:
        cases.append(
            (
                f"LWP tutorial: {name}",
                _engine_of_example(name, False),
                _engine_of_example(name, True),
            )
        )
    ratios = []
    print(f"{'program':<40} {'run, LWP off':>14} {'run, LWP on':>14} {'on / off':>9}")
    for label, off, on in cases:
        assert on.profile().blocks is not None and off.profile().blocks is None
        off_s, on_s = _compare(off, on)
        ratios.append(on_s / off_s)
        print(f"{label:<40} {off_s * 1e3:>11.3f} ms {on_s * 1e3:>11.3f} ms {on_s / off_s:>9.3f}")
        executions = on.profile().blocks.num_executions
        print(f"{'':<40} (blocks recorded with LWP on: {executions:,} executions)")
    worst = max(ratios)
    mean = statistics.geometric_mean(ratios)
    report("run time, LWP on / off (geometric mean)", mean, "x", f"<= {TARGET}", mean <= TARGET)
    report("run time, LWP on / off (worst program)", worst, "x", f"<= {TARGET}", worst <= TARGET)


if __name__ == "__main__":
    main()
