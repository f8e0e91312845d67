"""popops.gather (ONNX Gather, PopLibs' multiSlice) against numpy.take: every axis,
negative and repeated indices, float32 / float16 / int data, plans that split the sliced
rows (partials summed exactly), and an out-of-range index stopping the run."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    INT,
    ExecutionError,
    Graph,
    IPUModel,
    Sequence,
    ShapeError,
    TypeMismatchError,
    popops,
)
from ipu_engine.popops.gather import plan_gather
from tests.ipu_engine.op_harness import op_contexts, run_op

RNG = np.random.default_rng(9)


def take(data: np.ndarray, indices: np.ndarray, axis: int, tiles: int = 32):
    graph, out = run_op(
        lambda g, t, prog: popops.gather(g, t["data"], t["indices"], axis, prog, "lookup"),
        {"data": data, "indices": indices},
        tiles,
    )
    return graph, out["out"]


@pytest.mark.parametrize(
    ("data_shape", "index_shape", "axis"),
    [
        ((50, 16), (3, 7), 0),  # an embedding lookup
        ((4, 9, 5), (6,), 1),
        ((3, 4, 11), (2, 2), -1),
        ((7,), (), 0),  # a scalar index drops the axis
        ((1, 1), (5,), 1),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_gather_equals_numpy_take(data_shape, index_shape, axis, dtype) -> None:
    data = (RNG.standard_normal(data_shape) * 100).astype(dtype)
    size = data_shape[axis]
    indices = RNG.integers(-size, size, index_shape).astype(np.int32)  # negatives count back
    graph, got = take(data, indices, axis)
    want = np.take(data, indices, axis=axis)
    assert got.dtype == dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    assert len(op_contexts(graph, "popops::gather")) == 1


def test_split_rows_sum_partials_exactly() -> None:
    plan = plan_gather(3000, 8, 20, 4, 32, 638976)
    assert plan.row_blocks > 1  # the partials of several row blocks are summed
    data = RNG.standard_normal((3000, 8)).astype(np.float32)
    data[2999] = -0.0  # a negative zero survives the sum of -0.0 partials
    data[5] = np.inf
    indices = np.array([2999, 0, 5, 1500, 2999, 749, 750, 2250, -1, 3, 4, 6, 7, 8, 9, 10,
                        11, 12, 13, 14], dtype=np.int32)  # fmt: skip
    graph, got = take(data, indices, 0)
    want = np.take(data, indices, axis=0)
    assert np.array_equal(got, want)
    assert np.signbit(got[0]).all() and np.signbit(got[8]).all()
    assert any(cs.name.endswith("Reduce") for cs in graph.compute_sets)


@pytest.mark.parametrize("bad", [50, -51])
def test_out_of_range_index_stops_the_run(bad: int) -> None:
    data = RNG.standard_normal((50, 4)).astype(np.float32)
    indices = np.array([1, bad, 2], dtype=np.int32)
    with pytest.raises(ExecutionError, match=f"popops::gather: index {bad} is out of range"):
        take(data, indices, 0)


def _graph() -> Graph:
    return Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)


def test_bad_arguments_are_typed_errors() -> None:
    graph = _graph()
    data = graph.add_variable(FLOAT, [5, 3], "table")
    with pytest.raises(TypeMismatchError, match="indices 'f' must be an integer type"):
        popops.gather(graph, data, graph.add_variable(FLOAT, [2], "f"), 0, Sequence())
    ids = graph.add_variable(INT, [2], "ids")
    with pytest.raises(ShapeError, match=r"popops::gather: axis 2 is outside 'table' \(5, 3\)"):
        popops.gather(graph, data, ids, 2, Sequence())
    with pytest.raises(ShapeError, match="axis must be an integer"):
        popops.gather(graph, data, ids, 0.5, Sequence())
