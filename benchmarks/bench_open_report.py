"""Opening the largest engine-made report (``scale_report``: 16 IPUs x 1472 tiles, ~400k
variables, 36k program steps run 108k times): time to open it and get the summary, and to
the first memory-per-tile array, each against ``Path.read_bytes()`` of its profile.pop,
measured alternately in one run; and the peak memory of a process that does both.

    python -m benchmarks.bench_open_report [--report DIR]   (default: build one, ~20 s)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks._timing import report
from benchmarks.bench_profile_pop import interleaved_medians
from benchmarks.scale_report import measure_scale_report
from profiler_core.analysis.memory import memory_table
from profiler_core.report import open_report


def summary(folder: Path) -> object:
    with open_report(folder) as opened:
        return opened.summary()


def memory_per_tile(folder: Path) -> object:
    with open_report(folder) as opened:
        return memory_table(opened).total()


_RSS_CHILD = """
import sys
from pathlib import Path
from profiler_core.analysis.memory import memory_table
from profiler_core.report import open_report

def high_water_mark():  # VmHWM, unlike ru_maxrss, is not inherited from the parent process
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

before = high_water_mark()
report = open_report(sys.argv[1])
report.summary(), memory_table(report).total()
print(before, high_water_mark())
"""


def peak_rss(folder: Path) -> tuple[int, int]:
    """(peak RSS after imports, peak RSS after summary + memory) of a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, str(folder)],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout.split()
    return int(out[0]), int(out[1])


def measure(folder: Path) -> None:
    profile = folder / "profile.pop"
    size = profile.stat().st_size
    t = interleaved_medians(
        {
            "read_bytes": profile.read_bytes,
            "summary": lambda: summary(folder),
            "memory": lambda: memory_per_tile(folder),
        },
        repeat=11,
    )
    print(
        f"profile.pop {size / 1e6:.1f} MB: read_bytes {t['read_bytes'] * 1e3:.1f} ms, open + "
        f"summary {t['summary'] * 1e3:.1f} ms, open + memory per tile {t['memory'] * 1e3:.1f} ms"
    )
    ratio = t["summary"] / t["read_bytes"]
    report("open_report + summary / read_bytes", ratio, "x", "<= 1.5x", ratio <= 1.5)
    ratio = t["memory"] / t["read_bytes"]
    report("open_report + memory per tile / read_bytes", ratio, "x", "<= 3x", ratio <= 3)
    base, peak = peak_rss(folder)
    ratio = peak / size
    report("peak RSS of the process (summary + memory) / file", ratio, "x", "<= 2x", ratio <= 2)
    ratio = (peak - base) / size
    report("peak RSS growth (summary + memory) / file size", ratio, "x", "<= 2x", ratio <= 2)


def main(argv: list[str] | None = None) -> None:
    measure_scale_report(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
