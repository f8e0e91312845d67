"""libpva-style walks on the largest engine-made report (``scale_report``: 16 IPUs x 1472
tiles, ~400k variables), the pattern PopLiner uses: every tile's memory categories (each
libpva category's ``total``, plus ``total.includingGaps`` and ``alwaysLiveBytes``), then
every liveness program step's not-always-live bytes on tile 0; and every tile's vertex types
with their code bytes. Timed from a freshly opened report (the sections decode inside the
walk), median of 3.

    python -m benchmarks.bench_pva [--report DIR]   (default: build one, ~20 s)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from benchmarks._timing import report
from benchmarks.scale_report import measure_scale_report

T = TypeVar("T")


def walk(folder: Path) -> tuple[int, int, int]:
    from profiler_core import pva

    rep = pva.openReport(folder)
    names = rep.compilation.tiles[0].memory.category.names(include_additions=False)
    categories = 0
    for tile in rep.compilation.tiles:
        memory = tile.memory
        category = memory.category
        categories += sum(getattr(category, name).total for name in names)
        categories += memory.total.includingGaps + memory.alwaysLiveBytes
    steps = 0
    peak = 0
    for step in rep.compilation.livenessProgramSteps:
        peak = max(peak, step.notAlwaysLiveMemoryForTile(0).bytes)
        steps += 1
    return categories, steps, peak


def vertex_code_walk(folder: Path) -> int:
    """PopLiner's other cache: every tile's vertex types with their code bytes."""
    from profiler_core import pva

    rep = pva.openReport(folder)
    return sum(v.codeBytes for tile in rep.compilation.tiles for v in tile.memory.vertices)


def median_of_3(fn: Callable[[], T]) -> tuple[float, T]:
    times: list[float] = []
    for _ in range(3):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[1], result  # the last result: every run gives the same


def measure(folder: Path) -> None:
    seconds, (_, steps, peak) = median_of_3(lambda: walk(folder))
    print(f"{steps} liveness steps, peak not-always-live bytes on tile 0: {peak}")
    ok = seconds <= 2
    report("open + every tile's categories + tile 0 per step", seconds, "s", "<= 2 s", ok)
    seconds, code = median_of_3(lambda: vertex_code_walk(folder))
    print(f"vertex code over every tile: {code} bytes")
    ok = seconds <= 2
    report("open + every tile's vertex types and code bytes", seconds, "s", "<= 2 s", ok)


def main(argv: list[str] | None = None) -> None:
    measure_scale_report(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
