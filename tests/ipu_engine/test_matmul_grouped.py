"""poplin.mat_mul_grouped (PopLibs' matMulGrouped) against numpy.matmul: BERT's attention
shapes over the whole IPU, more groups than tiles, split shared dimensions, float16."""

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
    poplin,
)
from ipu_engine.poplin import plan_matmul
from tests.ipu_engine.op_harness import op_contexts, run_op

RNG = np.random.default_rng(14)


def grouped(a: np.ndarray, b: np.ndarray, tiles: int = 32, options=None):
    return run_op(
        lambda g, t, prog: poplin.mat_mul_grouped(g, t["a"], t["b"], prog, "ab", options),
        {"a": a, "b": b},
        tiles,
    )


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    assert got.shape == want.shape
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


@pytest.mark.parametrize(("g", "m", "k", "n"), [(3, 7, 13, 5), (40, 3, 4, 2), (1, 1, 9, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_grouped_matmul_equals_numpy(g, m, k, n, dtype) -> None:
    a = RNG.standard_normal((g, m, k)).astype(dtype)
    b = RNG.standard_normal((g, k, n)).astype(dtype)
    graph, out = grouped(a, b)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert out["out"].dtype == dtype
    assert relative_error(out["out"], want) <= (1e-5 if dtype == np.float32 else 4e-3)
    assert len(op_contexts(graph, "poplin::matMulGrouped")) == 1


def test_more_groups_than_tiles_share_tiles() -> None:
    plan = plan_matmul(3, 4, 2, 4, "float", 32, 638976, groups=40)
    assert plan.bg > 1 and plan.sg * plan.bg >= 40


def test_bert_attention_scores_are_one_op_over_the_ipu() -> None:
    """12 heads of [384, 64] x [64, 384]: one Convolve compute set covering ~every tile."""
    a = RNG.standard_normal((12, 384, 64)).astype(np.float32)
    b = RNG.standard_normal((12, 64, 384)).astype(np.float32)
    graph, out = grouped(a, b, tiles=1472)
    assert relative_error(out["out"], np.matmul(a.astype(np.float64), b)) <= 1e-5
    convolve = [cs for cs in graph.compute_sets if cs.name.endswith("Convolve")]
    assert len(convolve) == 1
    assert np.unique(np.concatenate([blk.tiles for blk in convolve[0].blocks])).size > 1400


def test_split_shared_dimension_reduces_partials() -> None:
    a = RNG.standard_normal((4, 8, 200)).astype(np.float32)
    b = RNG.standard_normal((4, 200, 6)).astype(np.float32)
    options = {"availableMemoryProportion": 0.002}
    assert plan_matmul(8, 200, 6, 4, "float", 32, 638976, 0.002, groups=4).sk > 1
    graph, out = grouped(a, b, options=options)
    assert relative_error(out["out"], np.matmul(a.astype(np.float64), b)) <= 1e-5
    assert any(cs.name.endswith("Reduce") for cs in graph.compute_sets)


def test_bad_operands_are_typed_errors() -> None:
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)
    a = graph.add_variable(FLOAT, [2, 3, 4], "a")
    with pytest.raises(ShapeError, match=r"poplin::matMulGrouped: cannot multiply 'a' \(2, 3, 4\)"):
        poplin.mat_mul_grouped(graph, a, graph.add_variable(FLOAT, [3, 4, 5], "b"), Sequence())
    with pytest.raises(ShapeError, match="needs \\[G,M,K\\] x \\[G,K,N\\]"):
        poplin.mat_mul_grouped(graph, a, graph.add_variable(FLOAT, [4, 5], "flat"), Sequence())
    with pytest.raises(TypeMismatchError, match="'a' is FLOAT but 'h' is HALF"):
        poplin.mat_mul_grouped(graph, a, graph.add_variable(HALF, [2, 4, 5], "h"), Sequence())
    ints = graph.add_variable(INT, [2, 3, 4], "i")
    with pytest.raises(TypeMismatchError, match="needs float or half"):
        poplin.mat_mul_grouped(graph, ints, graph.add_variable(INT, [2, 4, 1], "j"), Sequence())
