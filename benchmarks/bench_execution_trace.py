"""The Execution Trace on 16 IPUs and 1,000,000 step instances: load to first paint, zoom and
pan redraws, and the memory the page adds, against the size of the execution section.

The report is a ProfileData built with numpy and written with profile.pop's writer (as
bench_profile_pop does): the engine's scale_report reaches ~100,000 instances in minutes
on two cores, and a million would take far longer. It is shaped like an engine run:
20,000 program steps in BSP order (sync, exchange, compute) with per-tile compute cycles,
each IPU working on some steps and idle in others, executed as a loop body 50 times.

    python -m benchmarks.bench_execution_trace
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._timing import report
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.model.profile import (
    DebugData,
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
NUM_STEPS, INSTANCES = 20_000, 1_000_000
COMPUTE_SETS = NUM_STEPS // 3
TILES_PER_CS = 64


def trace_profile(seed: int = 0) -> tuple[ProfileData, DebugData]:
    rng = np.random.default_rng(seed)
    s, cs, tiles = NUM_STEPS, COMPUTE_SETS, NUM_IPUS * TILES_PER_IPU
    pattern = np.array([StepKind.SYNC, StepKind.DO_EXCHANGE, StepKind.ON_TILE_EXECUTE])
    kind = np.resize(pattern, s).astype(np.uint8)
    kind[::97] = StepKind.GLOBAL_EXCHANGE
    kind[::1009] = StepKind.STREAM_COPY_BEGIN
    step_cs = np.full(s, -1, np.int32)
    compute = np.flatnonzero(kind == StepKind.ON_TILE_EXECUTE)
    step_cs[compute] = np.arange(compute.size) % cs
    # each compute set runs on 64 tiles of one IPU; its step costs that IPU its slowest tile
    cs_ipu = rng.integers(0, NUM_IPUS, cs)
    cst_cs = np.repeat(np.arange(cs, dtype=np.int32), TILES_PER_CS)
    first_tile = rng.integers(0, TILES_PER_IPU - TILES_PER_CS, cs)
    cst_tile = (
        np.repeat(cs_ipu * TILES_PER_IPU + first_tile, TILES_PER_CS)
        + np.tile(np.arange(TILES_PER_CS), cs)
    ).astype(np.int32)
    cst_cycles = rng.integers(200, 4000, cst_cs.size).astype(np.int32)
    cycles = np.zeros((s, NUM_IPUS), np.int64)
    slowest = np.maximum.reduceat(cst_cycles, np.arange(0, cst_cs.size, TILES_PER_CS))
    cycles[compute, cs_ipu[step_cs[compute]]] = slowest[step_cs[compute]]
    others = kind != StepKind.ON_TILE_EXECUTE
    cycles[others] = rng.integers(0, 600, (int(others.sum()), NUM_IPUS))
    cycles[kind == StepKind.SYNC] = 30
    names = Strings.from_list(
        [f"layer{i % 50}/op{i // 3}/step{i}" for i in range(s)] + ["PopLin::MatMul", "run"]
    )
    graph = GraphData(
        strings=names,
        **{name: np.zeros(0, dtype) for name, dtype in _EMPTY_GRAPH.items()},
        var_shape_offsets=np.zeros(1, np.int64),
        cs_name=np.arange(cs, dtype=np.int32),
        cs_debug=np.arange(cs, dtype=np.int32) % 1000,
        vt_name=np.array([s], np.int32),
        vt_code_bytes=np.array([300], np.int32),
        vt_supervisor=np.zeros(1, bool),
        vc_cs=cst_cs,
        vc_type=np.zeros(cst_cs.size, np.int32),
        vc_tile=cst_tile,
        vc_count=np.full(cst_cs.size, 4, np.int32),
        vc_flops=np.zeros(cst_cs.size, np.int64),
    )
    programs = ProgramData(
        node_kind=np.zeros(1, np.uint8),
        node_name=np.array([s + 1], np.int32),
        node_parent=np.array([-1], np.int32),
        node_step=np.array([0], np.int32),
        node_count=np.zeros(1, np.int64),
        node_debug=np.array([-1], np.int32),
        node_function=np.array([-1], np.int32),
        roots=np.zeros(1, np.int32),
        step_kind=kind,
        step_name=np.arange(s, dtype=np.int32),
        step_cs=step_cs,
        step_debug=(np.arange(s, dtype=np.int32) // 12) % 1000,
        step_node=np.zeros(s, np.int32),
        step_cycles=cycles,
        step_global_bytes=np.zeros(s, np.int64),
        exch_step=np.zeros(0, np.int32),
        exch_tile=np.zeros(0, np.int32),
        exch_bytes_in=np.zeros(0, np.int64),
        exch_bytes_out=np.zeros(0, np.int64),
        cst_cs=cst_cs,
        cst_tile=cst_tile,
        cst_cycles=cst_cycles,
    )
    step_ids = np.resize(np.arange(s, dtype=np.int32), INSTANCES)
    durations = cycles.max(axis=1)[step_ids]
    starts = np.concatenate(([0], np.cumsum(durations)[:-1])).astype(np.int64)
    run = RunData(0, "bench", step_ids, starts, int(durations.sum()))
    header = Header(1, 0, "ipu_engine", "0.1.0", "bench", time.time(), "trace-bench", {}, False)
    profile = ProfileData(
        header=header,
        target=TargetInfo("ipu2", NUM_IPUS, TILES_PER_IPU, 638_976, 1.33e9),
        graph=graph,
        memory=MemoryData(
            np.zeros((len(MemoryCategory), tiles), np.int64), np.zeros(tiles, np.int64)
        ),
        programs=programs,
        liveness=LivenessData(0, np.zeros(s, np.int64), *(np.zeros(0, np.int32),) * 3),
        execution=ExecutionData([run]),
    )
    contexts = 1000
    debug = DebugData(
        report_id="trace-bench",
        name=[f"op{i}" for i in range(contexts)],
        parent=np.full(contexts, -1, np.int32),
        layer=[f"layer{i % 50}" for i in range(contexts)],
        op=["poplin::matMul" if i % 2 else "popops::add" for i in range(contexts)],
        api=["poplin::matMul" if i % 2 else "popops::add" for i in range(contexts)],
        file=[""] * contexts,
        line=np.zeros(contexts, np.int32),
        args=[{} for _ in range(contexts)],
    )
    return profile, debug


_EMPTY_GRAPH = {
    "var_name": np.int32,
    "var_type": np.uint8,
    "var_elements": np.int64,
    "var_bytes": np.int64,
    "var_is_constant": bool,
    "var_always_live": bool,
    "var_debug": np.int32,
    "var_shape_dims": np.int64,
    "region_var": np.int32,
    "region_tile": np.int32,
    "region_start": np.int64,
    "region_elements": np.int64,
}


def write_report(folder: Path) -> Path:
    profile, debug = trace_profile()
    write_profile(folder / "profile.pop", profile)
    write_debug(folder / "debug.cbor", debug)
    return folder


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_report(Path(tmp))
        timing = _session(app, folder, trace_memory=False)
        memory = _session(app, folder, trace_memory=True)
    section = timing["section"]
    print(
        f"16 IPUs, {INSTANCES:,} step instances, {NUM_STEPS:,} steps (numpy-built ProfileData "
        f"written with the profile.pop writer); execution section {section / 2**20:.1f} MiB"
    )
    first = timing["first_paint"]
    report("first paint after load (s)", first, "s", "<= 1", first <= 1.0)
    switch = timing["switch"]
    report("switch to Flame+BSP, first paint (s)", switch, "s", "(info)", True)
    for name in ("Flat", "Flame+BSP", "Flat + tiles of IPU 0"):
        times = timing[name]
        median = statistics.median(times)
        report(f"zoom/pan redraw, {name}, median (ms)", median * 1e3, "ms", "<= 30", median <= 0.03)
        report(f"zoom/pan redraw, {name}, worst (ms)", max(times) * 1e3, "ms", "(info)", True)
    ratio = memory["peak"] / section
    report("view memory at its peak / execution section (x)", ratio, "x", "<= 2", ratio <= 2.0)
    kept = memory["retained"] / section
    report("  of which kept after the session (x)", kept, "x", "(info)", True)


def _session(app: Any, folder: Path, trace_memory: bool) -> dict[str, Any]:
    """Open, first paint, zoom/pan in Flat, in Flame+BSP and with IPU 0's tiles expanded."""
    from popvision_py.viewmodels.opened import OpenedReport
    from popvision_py.views.execution_trace.view import ExecutionTraceView
    from profiler_core.report import open_report

    view = ExecutionTraceView()
    view.resize(1400, 800)
    view.show()
    app.processEvents()
    opened_report = open_report(folder)
    opened_report.load(["target", "graph", "programs", "execution", "debug"])
    run = opened_report.execution.runs[0]
    out: dict[str, Any] = {"section": run.step_ids.nbytes + run.start_cycles.nbytes}
    if trace_memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    view.show_reports(OpenedReport(opened_report))
    view.plot.grab()  # the first paint
    out["first_paint"] = time.perf_counter() - t0
    out["Flat"] = _redraw_times(app, view)
    t0 = time.perf_counter()
    view.control_bar.layout_box.setCurrentText("Flame")
    view.control_bar.bsp.setChecked(True)
    view.plot.grab()  # the new lanes' whole-run spans are made here
    out["switch"] = time.perf_counter() - t0
    out["Flame+BSP"] = _redraw_times(app, view)
    view.control_bar.layout_box.setCurrentText("Flat")
    view.control_bar.bsp.setChecked(False)
    view.control_bar.tile_actions[0].setChecked(True)
    out["Flat + tiles of IPU 0"] = _redraw_times(app, view)
    if trace_memory:
        out["retained"], out["peak"] = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    view.clear()
    view.deleteLater()
    app.processEvents()
    return out


def _redraw_times(app: Any, view: Any) -> list[float]:
    """Zoom in step by step from the whole run to ~50 instances, panning at each level."""
    plot = view.plot
    plot.show_all()
    plot.grab()
    times = []
    total = view.model.total_cycles
    centre = total * 0.37
    width = float(total)
    while width > total / INSTANCES * 50:
        width *= 0.8
        for shift in (0.0, 0.2, -0.2):
            x0 = min(max(centre - width / 2 + shift * width, 0), total - width)
            t = time.perf_counter()
            plot.set_x_range(x0, x0 + width)
            plot.grab()
            times.append(time.perf_counter() - t)
    app.processEvents()
    return times


if __name__ == "__main__":
    main()
