"""profile.pop of a 16-IPU report (by_category 15 x 23,552 int64, 300k variables): opening it
for the summary and for the memory-per-tile array, against ``Path.read_bytes()`` of the same
file, and the reader's peak memory against the file's size. Measured side by side."""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._timing import median_seconds, report
from profiler_core.formats.profile_pop import ProfileReader, read_profile, write_profile
from profiler_core.model.kinds import MemoryCategory
from profiler_core.model.profile import (
    ExecutionData,
    GraphData,
    Header,
    LivenessData,
    MemoryData,
    ProfileData,
    ProgramData,
    RunData,
    TargetInfo,
)
from profiler_core.model.strings import Strings

NUM_IPUS, TILES_PER_IPU = 16, 1472
NUM_VARIABLES, NUM_STEPS, RUN_STEPS = 300_000, 20_000, 1_000_000


def large_profile(seed: int = 0) -> ProfileData:
    rng = np.random.default_rng(seed)
    tiles, v, s = NUM_IPUS * TILES_PER_IPU, NUM_VARIABLES, NUM_STEPS
    regions = 2 * v
    vertex_counts, nodes, exchanges = 400_000, s + 1, 200_000
    i32 = lambda n, high: rng.integers(0, high, n, dtype=np.int32)  # noqa: E731
    i64 = lambda n, high: rng.integers(0, high, n, dtype=np.int64)  # noqa: E731
    names = Strings.from_list(f"layer{i % 97}/block{i % 13}/var{i}" for i in range(v + s))
    dims = np.full(v, 2, np.int64)
    graph = GraphData(
        strings=names,
        var_name=np.arange(v, dtype=np.int32),
        var_type=rng.integers(0, 11, v, dtype=np.uint8),
        var_elements=i64(v, 10_000),
        var_bytes=i64(v, 40_000),
        var_is_constant=rng.random(v) < 0.1,
        var_always_live=rng.random(v) < 0.5,
        var_debug=i32(v, 100_000),
        var_shape_offsets=np.concatenate(([0], np.cumsum(dims))),
        var_shape_dims=i64(int(dims.sum()), 100),
        region_var=np.repeat(np.arange(v, dtype=np.int32), 2),
        region_tile=i32(regions, tiles),
        region_start=i64(regions, 5_000),
        region_elements=i64(regions, 5_000),
        cs_name=i32(5_000, v),
        cs_debug=i32(5_000, 100_000),
        vt_name=i32(200, v),
        vt_code_bytes=i32(200, 4_000),
        vt_supervisor=rng.random(200) < 0.2,
        vc_cs=i32(vertex_counts, 5_000),
        vc_type=i32(vertex_counts, 200),
        vc_tile=i32(vertex_counts, tiles),
        vc_count=i32(vertex_counts, 50),
        vc_flops=i64(vertex_counts, 10**6),
    )
    programs = ProgramData(
        node_kind=np.ones(nodes, np.uint8),
        node_name=i32(nodes, v + s),
        node_parent=np.concatenate(([-1], np.zeros(s, np.int32))).astype(np.int32),
        node_step=np.concatenate(([0], np.arange(s))).astype(np.int32),
        node_count=np.zeros(nodes, np.int64),
        node_debug=i32(nodes, 100_000),
        node_function=np.full(nodes, -1, np.int32),
        roots=np.zeros(1, np.int32),
        step_kind=rng.integers(0, 7, s, dtype=np.uint8),
        step_name=np.arange(v, v + s, dtype=np.int32),
        step_cs=i32(s, 5_000),
        step_debug=i32(s, 100_000),
        step_node=np.arange(1, s + 1, dtype=np.int32),
        step_cycles=i64(s * NUM_IPUS, 2_000).reshape(s, NUM_IPUS),
        step_global_bytes=i64(s, 10_000),
        exch_step=i32(exchanges, s),
        exch_tile=i32(exchanges, tiles),
        exch_bytes_in=i64(exchanges, 10_000),
        exch_bytes_out=i64(exchanges, 10_000),
        cst_cs=i32(vertex_counts, 5_000),
        cst_tile=i32(vertex_counts, tiles),
        cst_cycles=i64(vertex_counts, 5_000),
    )
    runs = [
        RunData(0, f"run {r}", i32(RUN_STEPS, s), np.cumsum(i64(RUN_STEPS, 2_000)), 10**9)
        for r in range(2)
    ]
    return ProfileData(
        header=Header(1, 0, "ipu_engine", "0.1.0", "bench", time.time(), "bench-0", {}, False),
        target=TargetInfo("ipu2", NUM_IPUS, TILES_PER_IPU, 638_976, 1.33e9),
        graph=graph,
        memory=MemoryData(
            i64(len(MemoryCategory) * tiles, 40_000).reshape(-1, tiles), i64(tiles, 99)
        ),
        programs=programs,
        liveness=LivenessData(10**9, i64(s, 10**9), i32(v // 2, v), i32(v // 2, s), i32(v // 2, s)),
        execution=ExecutionData(runs),
    )


def summary(path: Path) -> object:
    reader = ProfileReader(path)
    return reader.header.report_id, reader.target.num_tiles, reader.memory.total_including_gaps


def memory_per_tile(path: Path) -> object:
    return ProfileReader(path).memory.by_category


_RSS_CHILD = """
import sys
from pathlib import Path
from profiler_core.formats.profile_pop import ProfileReader

def high_water_mark():  # VmHWM, unlike ru_maxrss, is not inherited from the parent process
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

before = high_water_mark()
reader = ProfileReader(Path(sys.argv[1]))
reader.header, reader.target, reader.memory.total_including_gaps
if sys.argv[2] == "all":
    reader.to_profile()
print(before, high_water_mark())
"""


def peak_rss(path: Path, what: str) -> tuple[int, int]:
    """(peak RSS after imports, peak RSS after reading) of a fresh process, in bytes."""
    out = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, str(path), what],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout.split()
    return int(out[0]), int(out[1])


def interleaved_medians(functions: dict[str, object], repeat: int = 9) -> dict[str, float]:
    """Median seconds of each function, run in turn, so system noise hits all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeat + 1):
        for name, fn in functions.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(values[1:]) for name, values in times.items()}


def write_large(path: Path) -> tuple[float, np.ndarray]:
    """Seconds to write the large profile, and its memory per tile to check the reader."""
    profile = large_profile()
    return median_seconds(
        lambda: write_profile(path, profile), repeat=3
    ), profile.memory.by_category


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "profile.pop"
        write_s, expected_memory = write_large(path)
        gc.collect()  # measure reading in a process that holds no second copy
        size = path.stat().st_size
        t = interleaved_medians(
            {
                "read_bytes": path.read_bytes,
                "summary": lambda: summary(path),
                "memory": lambda: memory_per_tile(path),
                "everything": lambda: read_profile(path),
            }
        )
        assert np.array_equal(memory_per_tile(path), expected_memory)
        print(
            f"file {size / 1e6:.1f} MB: write {write_s * 1e3:.1f} ms, read_bytes "
            f"{t['read_bytes'] * 1e3:.1f} ms, summary {t['summary'] * 1e3:.1f} ms, memory per "
            f"tile {t['memory'] * 1e3:.1f} ms, every section {t['everything'] * 1e3:.1f} ms"
        )
        ratio = t["summary"] / t["read_bytes"]
        report("profile.pop summary / read_bytes", ratio, "x", "<= 1.5x", ratio <= 1.5)
        ratio = t["memory"] / t["read_bytes"]
        report("profile.pop memory per tile / read_bytes", ratio, "x", "<= 3x", ratio <= 3)
        for what in ("summary", "all"):
            base, peak = peak_rss(path, what)
            ratio = (peak - base) / size
            report(
                f"profile.pop peak RSS growth ({what}) / file size", ratio, "x", "<= 2x", ratio <= 2
            )
            ratio = peak / size
            report(
                f"profile.pop peak RSS of the process ({what}) / file size",
                ratio,
                "x",
                "<= 2x",
                ratio <= 2,
            )


if __name__ == "__main__":
    main()
