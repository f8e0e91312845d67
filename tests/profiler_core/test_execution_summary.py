"""Poplar's execution summary of a run (profiler_core/analysis/execution_summary.py): figures
worked out by hand on a tiny engine program, recomputed independently per executed step on
tutorial 4, and the same figures in ``popvision-cli execution`` and the engine's summary."""

from __future__ import annotations

import io

import numpy as np
import pytest

from ipu_engine import FLOAT, Engine, Execute, Graph, Input, IPUModel, Output, Vertex
from profiler_core.analysis.execution_summary import (
    LABELS,
    TOTAL_LABEL,
    execution_summary,
    format_summary,
)
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.profiler_core.cli_json import popvision_cli


class Pass(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT)

    def compute(self):
        self.out[:] = self.in_


@pytest.fixture
def seven_vertex_engine() -> Engine:
    """7 vertices of 9 cycles on tile 0 of a 4-tile IPU; data on tile 0, so no exchange."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [7], "x")
    y = graph.add_variable(FLOAT, [7], "y")
    graph.set_tile_mapping(x, 0)
    graph.set_tile_mapping(y, 0)
    cs = graph.add_compute_set("cs")
    for i in range(7):
        v = graph.add_vertex(cs, Pass, {"in": x[i : i + 1], "out": y[i : i + 1]})
        graph.set_tile_mapping(v, 0)
        graph.set_perf_estimate(v, 9)
    engine = Engine(graph, Execute(cs))
    engine.load(device)
    engine.run()
    return engine


def test_hand_computed_summary_of_one_compute_set(seven_vertex_engine):
    s = execution_summary(seven_vertex_engine.profile(), 0)
    # tile 0 computes 108 cycles (two rounds of 9 x 6), tiles 1-3 wait for it: over 4 tiles
    assert s.total_cycles == 108
    assert s.compute_incl == pytest.approx(108 / 4)
    assert s.compute_excl == pytest.approx(63 / 4)  # 7 x 9 without the idle threads
    assert s.sync == pytest.approx(3 * 108 / 4)
    assert (s.ipu_exchange, s.global_exchange, s.host_exchange) == (0.0, 0.0, 0.0)
    assert s.percent(s.compute_incl) == pytest.approx(25.0)


def test_engine_prints_poplars_execution_summary_block(seven_vertex_engine):
    out = io.StringIO()
    seven_vertex_engine.print_profile_summary(out)
    lines = [line.strip() for line in out.getvalue().splitlines()]
    width = len(LABELS[0][1]) + 2  # labels padded to the longest, as Poplar aligns them
    assert f"{TOTAL_LABEL + ':':<{width}}108 (approx 0.1 microseconds)" in lines
    expected = {
        "compute_incl": "27.0 (25.0% of total)",
        "compute_excl": "15.8 (14.6% of total)",
        "ipu_exchange": "0.0 (0.0% of total)",
        "global_exchange": "0.0 (0.0% of total)",
        "host_exchange": "0.0 (0.0% of total)",
        "sync": "81.0 (75.0% of total)",
    }
    for key, label in LABELS:
        assert f"{label + ':':<{width}}{expected[key]}" in lines


def test_a_report_without_busy_cycles_says_so(seven_vertex_engine):
    profile = seven_vertex_engine.profile()
    profile.programs.cs_busy_cycles = None
    s = execution_summary(profile, 0)
    assert s.compute_excl is None
    assert s.compute_incl == pytest.approx(27.0)
    text = "\n".join(format_summary(s))
    assert "(excluding idle threads): not recorded in this report" in text


def _independent(report, run: int = 0) -> dict[str, float]:
    """The figures step instance by step instance, in plain Python (one IPU)."""
    p = report.programs
    tiles = report.target.num_tiles
    per_tile_cs: dict[int, np.ndarray] = {}
    for cs, tile, cycles in zip(p.cst_cs, p.cst_tile, p.cst_cycles, strict=True):
        per_tile_cs.setdefault(int(cs), np.zeros(tiles))[int(tile)] = cycles
    out = dict.fromkeys(["compute_incl", "ipu_exchange", "host_exchange", "sync", "other"], 0.0)
    for step in report.execution.runs[run].step_ids.tolist():
        kind, cycles = StepKind(int(p.step_kind[step])), float(p.step_cycles[step, 0])
        if kind is StepKind.ON_TILE_EXECUTE and p.step_cs[step] >= 0:
            own = per_tile_cs[int(p.step_cs[step])]
            out["compute_incl"] += own.mean()
            out["sync"] += cycles - own.mean()  # the others wait
        elif kind is StepKind.ON_TILE_EXECUTE:
            out["compute_incl"] += cycles
        elif kind is StepKind.DO_EXCHANGE:
            out["ipu_exchange"] += cycles
        elif kind in (StepKind.STREAM_COPY_MID, StepKind.PRINT_TENSOR):
            out["host_exchange"] += cycles
        elif kind in (StepKind.SYNC, StepKind.STREAM_COPY_END):
            out["sync"] += cycles
        else:
            out["other"] += cycles
    return out


def test_tutorial4_summary_equals_a_step_by_step_count(tutorial4_report):
    report = open_report(tutorial4_report)
    s = execution_summary(report, 0)
    want = _independent(report)
    assert s.compute_incl == pytest.approx(want["compute_incl"])
    assert s.ipu_exchange == pytest.approx(want["ipu_exchange"])
    assert s.host_exchange == pytest.approx(want["host_exchange"])
    assert s.sync == pytest.approx(want["sync"])
    assert s.global_exchange == 0.0
    # every tile-cycle of the run is in one category or in set-up/control steps
    listed = s.compute_incl + s.ipu_exchange + s.global_exchange + s.host_exchange + s.sync
    assert listed + want["other"] == pytest.approx(s.total_cycles)
    assert s.compute_excl is not None and 0 < s.compute_excl <= s.compute_incl


def test_cli_execution_gives_the_same_summary(tutorial4_report):
    s = execution_summary(open_report(tutorial4_report), 0)
    document = popvision_cli("execution", tutorial4_report)
    (rows,) = [v for k, v in document.items() if k.startswith("execution_summary_of_run_0")]
    assert [r["figure"] for r in rows] == [TOTAL_LABEL] + [label for _, label in LABELS]
    assert rows[0]["cycles"] == s.total_cycles
    for row, (_, _, value) in zip(rows[1:], s.rows(), strict=True):
        assert row["cycles"] == pytest.approx(round(value, 1))
        assert row["percent"] == pytest.approx(round(s.percent(value), 2))


def test_four_ipus_account_for_every_tile_cycle(four_ipu_report):
    """Across IPUs: each IPU's tiles spend its own cycles in exchanges and wait the rest of
    a step in sync, so the categories plus set-up and control steps make up the total."""
    report = open_report(four_ipu_report)
    s = execution_summary(report, 0)
    p = report.programs
    steps = report.execution.runs[0].step_ids
    kinds = p.step_kind[steps]
    cycles = p.step_cycles[steps].astype(np.float64)
    global_steps = kinds == int(StepKind.GLOBAL_EXCHANGE)
    assert global_steps.any()
    assert s.global_exchange == pytest.approx(cycles[global_steps].mean(axis=1).sum())
    control = np.isin(kinds, [int(k) for k in StepKind if k.is_control])
    other = control | (kinds == int(StepKind.STREAM_COPY_BEGIN))
    not_listed = cycles[other].max(axis=1).sum()
    listed = s.compute_incl + s.ipu_exchange + s.global_exchange + s.host_exchange + s.sync
    assert listed + not_listed == pytest.approx(s.total_cycles)
