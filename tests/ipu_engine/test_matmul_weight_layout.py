"""poplin.create_mat_mul_input_rhs (PopLibs' createMatMulInputRHS): a right operand made for
its product's plan is read where it lives, so the product exchanges its left operand only."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import FLOAT, HALF, INT, Engine, Graph, IPUModel, Sequence, poplin, poputil
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.poplar.virtual_graph import on_tiles

M, K, N = 2, 24, 20
A_TILE = 15  # the left operand waits on a tile the product does not use


def _product(made_for_plan: bool, options: dict | None = None, m: int = M):
    """C = A @ B on tiles 0..7 of a 16-tile IPU, A [m, K] held on tile 15: (engine, plan,
    B, bytes received before the product's compute set, numpy's A @ B, C)."""
    device = IPUModel("ipu2", tiles_per_ipu=16).create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [m, K], "a")
    graph.set_tile_mapping(a, A_TILE)
    prog = Sequence()
    with on_tiles(graph, range(8)):
        if made_for_plan:
            b = poplin.create_mat_mul_input_rhs(graph, FLOAT, [m, K], [K, N], "b", options)
        else:
            b = graph.add_variable(FLOAT, [K, N], "b")
            poputil.map_tensor_linearly(graph, b)
        plan = poplin.mat_mul_plan(graph, a, b, options)
        c = poplin.mat_mul(graph, a, b, prog, "c", options)
    for name, t in (("a", a), ("b", b)):
        graph.create_host_write(name, t)
    graph.create_host_read("c", c)
    engine = Engine(graph, prog)
    engine.load(device)
    rng = np.random.default_rng(11)
    av, bv = rng.standard_normal((m, K)), rng.standard_normal((K, N))
    engine.write_tensor("a", av.astype(np.float32))
    engine.write_tensor("b", bv.astype(np.float32))
    engine.run(0)
    received = sum(
        int(s.facts["traffic"].bytes_in.sum())
        for s in engine.executable.steps
        if s.name.endswith("Convolve/ExchangePre")
    )
    return engine, plan, b, received, av @ bv, engine.read_tensor("c")


def test_a_right_operand_made_for_its_plan_is_never_exchanged():
    engine, plan, b, received, expected, got = _product(made_for_plan=True)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    # the plan: 7 column blocks (6 of 3 columns, one of 2), K and M whole, one per tile
    assert (plan.sm, plan.sn, plan.sk, plan.bn, plan.bk) == (1, 7, 1, 3, 24)
    # every column block of A @ B needs all of A from tile 15: 7 x [2, 24] floats, and no
    # byte of B, which each vertex finds on its own tile
    assert received == 7 * M * K * 4
    # B per tile, by hand: 24 rows of 3 columns on tiles 0..5, of 2 on tile 6, none on 7
    per_tile = np.bincount(engine.graph.tile_array(b), minlength=16) * 4
    assert per_tile.tolist() == [288] * 6 + [192] + [0] * 9


def test_a_linearly_spread_right_operand_is_received_by_the_vertices_reading_it():
    """The same product with B spread linearly over tiles 0..7 receives most of B too:
    what ``create_mat_mul_input_rhs`` saves."""
    *_, received, expected, got = _product(made_for_plan=False)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert received > 7 * M * K * 4 + K * N * 4 // 2


@pytest.mark.parametrize(
    ("m", "options"),
    [
        (64, None),  # row blocks: each block of B is read on other tiles too
        (64, {"availableMemoryProportion": 0.002}),  # serial slices of the rows
    ],
)
def test_products_with_a_right_operand_made_for_the_plan_equal_numpy(m, options):
    _, plan, _, _, expected, got = _product(True, options, m)
    assert plan.sm > 1 or plan.serial > 1
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_bad_arguments_are_errors_naming_create_mat_mul_input_rhs():
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)
    api = "poplin::createMatMulInputRHS"
    with pytest.raises(ShapeError, match=f"{api}: cannot create the right operand"):
        poplin.create_mat_mul_input_rhs(graph, FLOAT, [2, 3], [4, 5])
    with pytest.raises(ShapeError, match=f"{api}: a_shape"):
        poplin.create_mat_mul_input_rhs(graph, FLOAT, "2x3", [3, 5])
    with pytest.raises(TypeMismatchError, match=f"{api}: needs a float or half type"):
        poplin.create_mat_mul_input_rhs(graph, INT, [2, 3], [3, 5])
    with pytest.raises(GraphError, match="availableMemoryProportion"):
        poplin.create_mat_mul_input_rhs(
            graph, HALF, [2, 3], [3, 5], options={"availableMemoryProportion": 2}
        )
