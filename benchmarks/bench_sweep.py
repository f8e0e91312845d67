"""A sweep against the same runs one after another (issue 40): tutorial 6 over 4 x 2 sizes,
each run writing its report, first as 8 commands run in turn, then as ``popvision-cli sweep``
on a LocalCluster (one worker per core), both end to end in the same sitting.

    python -m benchmarks.bench_sweep [--workers N]

Target on a 2-core machine: the sweep's wall time <= 0.6x the runs one after another. Each
run is a Python process importing the engine and numpy, so at best two cores give 0.5x; the
CPU each way got (children's CPU seconds / wall seconds) is printed beside it, as a machine
shared with other work gives a second process less than a second core.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import report
from profiler_core.runs.execute import ONE_THREAD

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "resources" / "examples" / "tutorial6_matrix_vector.py"
ROWS, COLS = ("1000", "2000", "3000", "4000"), ("250", "500")


def children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def one_after_another(out: Path) -> float:
    """The runs in turn, each with the environment a sweep gives it (one BLAS thread)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ONE_THREAD:
        env.setdefault(name, "1")
    started = time.perf_counter()
    for rows, cols in itertools.product(ROWS, COLS):
        options = {"autoReport.all": "true", "autoReport.directory": str(out / f"{rows}x{cols}")}
        env["POPLAR_ENGINE_OPTIONS"] = json.dumps(options)
        subprocess.run([sys.executable, str(SCRIPT), rows, cols], env=env, check=True,
                       capture_output=True, timeout=600)  # fmt: skip
    return time.perf_counter() - started


def swept(out: Path, workers: int | None) -> tuple[float, dict]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "profiler_core.cli", "sweep", "--out", str(out), "--json"]
    if workers:
        argv += ["--workers", str(workers)]
    argv += ["--", str(SCRIPT), "{rows=" + ",".join(ROWS) + "}", "{cols=" + ",".join(COLS) + "}"]
    started = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return seconds, json.loads(result.stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, help="default: one per core")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    print(f"{cores} cores; load average before: {os.getloadavg()[0]:.2f}")
    alone, sweeps = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(2):  # interleaved: a change in the machine's load hits both
            cpu = children_cpu()
            alone.append(one_after_another(Path(tmp) / f"alone{turn}"))
            alone_cores = (children_cpu() - cpu) / alone[-1]
            cpu = children_cpu()
            seconds, record = swept(Path(tmp) / f"sweep{turn}", args.workers)
            sweep_cores = (children_cpu() - cpu) / seconds
            sweeps.append(seconds)
            runs = record["runs"]
            busy = sum(r["wall_seconds"] for r in runs)
            workers = len({r["worker"] for r in runs})
            print(f"turn {turn + 1}: one after another {alone[-1]:.1f} s on {alone_cores:.2f} "
                  f"cores' worth of CPU; sweep {seconds:.1f} s on {sweep_cores:.2f} (its runs "
                  f"{busy:.1f} s together, {workers} workers)")  # fmt: skip
    ratio = sum(sweeps) / sum(alone)
    report("sweep of 8 runs / the same runs one after another", ratio, "x", "<= 0.6",
           ratio <= 0.6)  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
