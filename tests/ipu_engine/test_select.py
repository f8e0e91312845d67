"""popops.select (ONNX Where) against numpy.where: INT and BOOL conditions, broadcasting,
float32 and float16, and the errors for a float condition or mismatched operands."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    HALF,
    INT,
    Graph,
    IPUModel,
    Sequence,
    ShapeError,
    TypeMismatchError,
    popops,
)
from tests.ipu_engine.op_harness import op_contexts, run_op

RNG = np.random.default_rng(5)


def where(
    cond: np.ndarray, a: np.ndarray, b: np.ndarray, tiles: int = 32
) -> tuple[Graph, np.ndarray]:
    graph, out = run_op(
        lambda g, t, prog: popops.select(g, t["cond"], t["a"], t["b"], prog, "where"),
        {"cond": cond, "a": a, "b": b},
        tiles,
    )
    return graph, out["out"]


@pytest.mark.parametrize(
    ("cond_shape", "a_shape", "b_shape"),
    [
        ((37, 3), (37, 3), (37, 3)),  # not a multiple of the tiles
        ((4, 1), (1, 5), (4, 5)),  # numpy broadcasting of all three
        ((2, 3, 1), (3, 7), (1,)),
        ((1,), (1,), (1,)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("cond_dtype", [np.int32, np.bool_])
def test_select_equals_numpy_where(cond_shape, a_shape, b_shape, dtype, cond_dtype) -> None:
    cond = RNG.integers(0, 2, cond_shape).astype(cond_dtype)
    a = RNG.standard_normal(a_shape).astype(dtype)
    b = RNG.standard_normal(b_shape).astype(dtype)
    graph, got = where(cond, a, b)
    want = np.where(cond, a, b)
    assert got.dtype == dtype and got.shape == want.shape
    assert np.array_equal(got, want)
    assert len(op_contexts(graph, "popops::select")) == 1


def test_any_nonzero_integer_is_true() -> None:
    cond = np.array([0, 1, 2, -1, 0, 7], dtype=np.int32)
    a = np.arange(6, dtype=np.float32)
    b = -np.ones(6, dtype=np.float32)
    _, got = where(cond, a, b, tiles=4)
    assert got.tolist() == [-1.0, 1.0, 2.0, 3.0, -1.0, 5.0]


def _graph() -> Graph:
    return Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)


def test_bad_operands_are_typed_errors() -> None:
    graph = _graph()
    a = graph.add_variable(FLOAT, [3], "a")
    with pytest.raises(TypeMismatchError, match="popops::select: the condition 'c' must be BOOL"):
        popops.select(graph, graph.add_variable(FLOAT, [3], "c"), a, a, Sequence())
    half = graph.add_variable(HALF, [3], "h")
    cond = graph.add_variable(INT, [3], "cond")
    with pytest.raises(TypeMismatchError, match="'a' is FLOAT but 'h' is HALF"):
        popops.select(graph, cond, a, half, Sequence())
    wide = graph.add_variable(FLOAT, [4], "wide")
    with pytest.raises(ShapeError, match="popops::select: shapes do not broadcast"):
        popops.select(graph, cond, a, wide, Sequence())
