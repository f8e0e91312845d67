"""availableMemoryProportion as Poplar documents it: the share of a tile's memory a matmul
plan may use for temporaries (exchanged operand blocks and partials). A lower proportion
gives a different plan -- serial slices -- with fewer temporary bytes per tile in the
report's memory and liveness, and more cycles in its execution profile."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from ipu_engine import FLOAT, Engine, Graph, GraphError, IPUModel, Sequence, poplin, poputil
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report

TILE_BYTES = 638_976  # an ipu2 tile: 624 KiB
SIZE = 1024  # [1024, 1024] x [1024, 1024] floats: 4 MiB per operand, 1 GFLOP


def _run_matmul(directory: Path, proportion: float) -> tuple[object, np.ndarray, np.ndarray]:
    """C = A @ B at ``proportion`` with reports on: (report, C, numpy's A @ B)."""
    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [SIZE, SIZE], "a")
    b = graph.add_variable(FLOAT, [SIZE, SIZE], "b")
    for t in (a, b):
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(t.name, t)
    prog = Sequence(name="matmul")
    c = poplin.mat_mul(graph, a, b, prog, "c", {"availableMemoryProportion": proportion})
    graph.create_host_read("c", c)
    options = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    engine = Engine(graph, prog, options=options)
    engine.load(device)
    rng = np.random.default_rng(5)
    av, bv = (rng.standard_normal((SIZE, SIZE)).astype(np.float32) for _ in range(2))
    engine.write_tensor("a", av)
    engine.write_tensor("b", bv)
    engine.run(0)
    return open_report(directory / "matmul"), engine.read_tensor("c"), av.astype(np.float64) @ bv


def _temporaries_per_tile(report) -> np.ndarray:
    """What the plan holds on each tile for its temporaries: the operand blocks received
    (exchange buffers) and the partials (not-always-live variables; A, B and C are
    written or read by the host, so always live)."""
    memory = np.asarray(report.memory.by_category, dtype=np.int64)
    return (
        memory[MemoryCategory.EXCHANGE_BUFFERS] + memory[MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES]
    )


def _serial_split(report) -> int:
    debug = report.debug
    context = debug.name.index("c")
    assert debug.op[context] == "poplin::matMul"
    return int(debug.args[context]["serialSplit"])


@pytest.fixture(scope="module")
def default_and_low(tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("amp")
    return _run_matmul(directory / "p60", 0.6), _run_matmul(directory / "p10", 0.1)


def test_a_lower_proportion_keeps_the_temporaries_within_its_budget(default_and_low):
    (default, c60, expected), (low, c10, _) = default_and_low
    budget_60, budget_10 = 0.6 * TILE_BYTES, 0.1 * TILE_BYTES  # 383,385.6 and 63,897.6 bytes
    temp_60, temp_10 = _temporaries_per_tile(default).max(), _temporaries_per_tile(low).max()
    assert temp_60 <= budget_60
    assert temp_60 > budget_10  # the default plan would not fit the lower budget...
    assert temp_10 <= budget_10  # ...so the planner found another one that does
    for c in (c60, c10):
        assert np.max(np.abs(c - expected)) <= 1e-4 * np.max(np.abs(expected))


def test_the_lower_proportion_plan_is_serial_and_frees_partials_between_slices(default_and_low):
    (default, _, _), (low, _, _) = default_and_low
    assert _serial_split(default) == 1
    serial = _serial_split(low)
    assert serial > 1
    graph = low.graph
    names = graph.strings.take(graph.cs_name)
    convolves = [n for n in names if n.startswith("c/Conv_1/Serial_") and n.endswith("/Convolve")]
    assert len(convolves) == serial
    # one partials variable per slice, never two live at once: the liveness peak of the
    # whole IPU is lower, and on every tile the partials take no more than one slice's
    partials = np.flatnonzero(np.array(graph.strings.take(graph.var_name)) == "partials")
    assert partials.size == serial
    liveness = low.liveness
    live = [
        (int(f), int(t))
        for v, f, t in zip(
            liveness.interval_var, liveness.interval_first, liveness.interval_last, strict=True
        )
        if v in partials
    ]
    live.sort()
    assert all(nxt > last for (_, last), (nxt, _) in itertools.pairwise(live))
    assert liveness.step_live_bytes.max() < default.liveness.step_live_bytes.max()


def test_the_serial_plan_costs_cycles(default_and_low):
    (default, _, _), (low, _, _) = default_and_low
    (run_60,) = default.execution.runs
    (run_10,) = low.execution.runs
    assert run_10.total_cycles > run_60.total_cycles


@pytest.mark.parametrize("bad", [0, 0.0, -0.2, 1.5, float("nan"), "lots", None, True])
def test_a_proportion_outside_zero_to_one_is_an_error_naming_the_option(bad) -> None:
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [4, 4], "a")
    x = graph.add_variable(FLOAT, [1, 4, 4, 2], "x")
    w = graph.add_variable(FLOAT, [3, 3, 2, 2], "w")
    options = {"availableMemoryProportion": bad}
    with pytest.raises(GraphError, match=r"poplin::matMul: option availableMemoryProportion "):
        poplin.mat_mul(graph, a, a, Sequence(), "c", options)
    with pytest.raises(GraphError, match=r"poplin::convolution: option availableMemoryProp.* \(0"):
        poplin.convolution(graph, x, w, Sequence(), "y", options=options)


def test_a_plan_that_cannot_fit_says_so_naming_the_op_and_takes_the_smallest(caplog):
    from ipu_engine.poplin.planner import plan_matmul

    with caplog.at_level("WARNING", logger="poplibs.poplin"):
        plan = plan_matmul(512, 512, 512, 4, "float", 4, 638_976, 0.001)
    assert not plan.fits_budget
    (record,) = caplog.records
    text = record.getMessage()
    assert text.startswith("matmul [512,512]x[512,512]: no plan keeps to the memory budget of 639")
    assert f"using the smallest, {plan.temp_bytes} bytes" in text
