"""availableMemoryProportion from the front-end, as PopTorch users set it: per op with
``ops.set_available_memory(tensor, p)`` (``poptorch.set_available_memory``) and for the
whole model with ``Options(available_memory_proportion=...)``
(``options.setAvailableMemoryProportion({"IPU0": p})``). Each reaches the matmul's plan:
the report's debug arguments, its temporaries per tile and its cycles change."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import GraphError, OptionError, Options, nn, ops
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report

TILE_BYTES = 638_976
RNG = np.random.default_rng(3)
X = RNG.standard_normal((1024, 1024)).astype(np.float32)
W = RNG.standard_normal((1024, 1024)).astype(np.float32)


def plain(x, w):
    return x @ w


def per_op(x, w):
    out = x @ w
    return ops.set_available_memory(out, 0.1)  # as poptorch.set_available_memory(out, 0.1)


def per_op_over_model(x, w):
    return ops.set_available_memory(x @ w, 0.6)


def _compiled(tmp_path: Path, fn, **options) -> tuple[dict, np.ndarray, object]:
    """Run ``fn`` with reports on: (the matmul's debug arguments, result, report)."""
    name = fn.__name__
    engine_options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    out = ie.compile(fn, [X, W], name=name, engine_options=engine_options, **options)
    report = open_report(tmp_path / name)
    debug = report.debug
    (context,) = [i for i, op in enumerate(debug.op) if op == "poplin::matMul" == debug.api[i]]
    return debug.args[context], out, report


def _temporaries(report) -> int:
    memory = np.asarray(report.memory.by_category, dtype=np.int64)
    both = (
        memory[MemoryCategory.EXCHANGE_BUFFERS] + memory[MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES]
    )
    return int(both.max())


@pytest.fixture(scope="module")
def default_run(tmp_path_factory: pytest.TempPathFactory):
    return _compiled(tmp_path_factory.mktemp("default"), plain)


def _check_planned_at_tenth(args: dict, out: np.ndarray, report, default_run) -> None:
    default_args, _, default_report = default_run
    assert default_args["availableMemoryProportion"] == 0.6
    assert default_args["serialSplit"] == 1
    assert default_args["tempBytesPerTile"] > 0.1 * TILE_BYTES  # would not fit 0.1
    assert args["availableMemoryProportion"] == 0.1
    assert args["serialSplit"] > 1
    assert args["tempBytesPerTile"] <= 0.1 * TILE_BYTES  # 63,897.6 bytes
    assert _temporaries(report) < _temporaries(default_report)
    cycles = report.execution.runs[0].total_cycles
    assert cycles > default_report.execution.runs[0].total_cycles
    expected = X.astype(np.float64) @ W
    assert np.max(np.abs(out - expected)) <= 1e-4 * np.max(np.abs(expected))


def test_set_available_memory_plans_that_matmul_within_the_proportion(tmp_path, default_run):
    _check_planned_at_tenth(*_compiled(tmp_path, per_op), default_run)


@pytest.mark.parametrize("value", [0.1, {"IPU0": 0.1}])
def test_the_model_option_plans_every_matmul_within_it(tmp_path, default_run, value):
    args, out, report = _compiled(tmp_path, plain, available_memory_proportion=value)
    _check_planned_at_tenth(args, out, report, default_run)


def test_the_per_op_proportion_wins_over_the_model_option(tmp_path):
    args, _, _ = _compiled(tmp_path, per_op_over_model, available_memory_proportion=0.1)
    assert args["availableMemoryProportion"] == 0.6 and args["serialSplit"] == 1


def test_a_dict_sets_each_ipu_of_a_sharded_model(tmp_path):
    def two_shards(x, w):
        with ie.shard(0):
            y = x @ w
        with ie.shard(1):
            return y @ w

    options = {"IPU0": 0.6, "IPU1": 0.1}
    engine_options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    out = ie.compile(
        two_shards, [X, W], num_ipus=2, name="two", engine_options=engine_options,
        available_memory_proportion=options,
    )  # fmt: skip
    debug = open_report(tmp_path / "two").debug
    planned = [
        debug.args[i] for i, op in enumerate(debug.op) if op == "poplin::matMul" == debug.api[i]
    ]
    assert [a["availableMemoryProportion"] for a in planned] == [0.6, 0.1]
    assert [a["serialSplit"] > 1 for a in planned] == [False, True]
    expected = X.astype(np.float64) @ W @ W
    assert np.max(np.abs(out - expected)) <= 1e-4 * np.max(np.abs(expected))


def test_set_available_memory_finds_a_linear_layers_matmul_through_its_bias():
    layer = nn.Linear(8, 4, seed=1)
    seen = {}

    def forward(x):
        y = ops.set_available_memory(layer(x), 0.25)
        seen["y"] = y
        return y

    x = RNG.standard_normal((2, 8)).astype(np.float32)
    out = ie.compile(forward, [x])
    np.testing.assert_allclose(out, x @ layer.weight + layer.bias, rtol=1e-5, atol=1e-5)
    trace = seen["y"].trace
    (matmul,) = [n for n in trace.nodes if n.op == "matmul"]
    assert matmul.attrs["available_memory_proportion"] == 0.25


@pytest.mark.parametrize("bad", [0, 1.5, -0.1, float("nan"), "0.3", True, None])
def test_a_proportion_outside_zero_to_one_names_the_option(bad):
    if bad is not None:  # None is the option's "not set"
        with pytest.raises(OptionError, match=r"option 'available_memory_proportion' must be a"):
            Options(available_memory_proportion=bad)
    with pytest.raises(OptionError, match=r"'available_memory_proportion'\['IPU1'\] must be"):
        Options(available_memory_proportion={"IPU0": 0.5, "IPU1": bad})

    def traced(x, w):
        return ops.set_available_memory(x @ w, bad)

    small = np.ones((2, 2), np.float32)
    with pytest.raises(OptionError, match=r"\.py:\d+: set_available_memory: proportion must be"):
        ie.compile(traced, [small, small])


def test_an_ipu_key_that_names_no_ipu_is_an_error():
    with pytest.raises(OptionError, match=r"key 'ipu0' names no IPU; use 'IPU0', 'IPU1'"):
        Options(available_memory_proportion={"ipu0": 0.3})


def test_set_available_memory_on_a_result_no_matmul_made_is_an_error():
    def traced(x):
        return ops.set_available_memory(ops.relu(x), 0.3)

    with pytest.raises(GraphError, match=r"float\[2,2\] is made by 'relu', not by a matmul"):
        ie.compile(traced, [np.ones((2, 2), np.float32)])


def test_a_training_model_plans_forward_and_backward_matmuls_with_the_model_option(tmp_path):
    model = nn.Sequential(nn.Linear(16, 8, seed=1), nn.ReLU(), nn.Linear(8, 4, seed=2))
    engine_options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    train = ie.training_model(
        model, ie.SGD(lr=0.1), nn.CrossEntropyLoss(), engine_options=engine_options,
        available_memory_proportion={"IPU0": 0.05},
    )  # fmt: skip
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    train(x, np.array([0, 1, 2, 3], dtype=np.int32))
    debug = open_report(tmp_path / "training").debug
    planned = [
        debug.args[i] for i, op in enumerate(debug.op) if op == "poplin::matMul" == debug.api[i]
    ]
    # forward: 2 layers; backward: 2 weight gradients and 1 input gradient
    assert len(planned) == 5
    assert {a["availableMemoryProportion"] for a in planned} == {0.05}
