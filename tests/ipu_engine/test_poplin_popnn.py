"""poplin matmul over all tiles and popnn layers agree with numpy."""

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    INT,
    Graph,
    Sequence,
    ShapeError,
    TypeMismatchError,
    poplin,
    popnn,
    poputil,
)
from ipu_engine.poplin import plan_matmul
from tests.ipu_engine.conftest import run_program

RNG = np.random.default_rng(11)


def test_chained_matmul_over_all_1472_tiles_equals_numpy(ipu2):
    graph = Graph(ipu2.target)
    shapes = {"m1": (900, 600), "m2": (600, 300), "m3": (300, 200)}
    t = {}
    for name, shape in shapes.items():
        t[name] = graph.add_variable(FLOAT, shape, name)
        poputil.map_tensor_linearly(graph, t[name])
        graph.create_host_write(name, t[name])
    prog = Sequence()
    m4 = poplin.mat_mul(graph, t["m1"], t["m2"], prog, "m4")
    m5 = poplin.mat_mul(graph, m4, t["m3"], prog, "m5")
    graph.create_host_read("m5", m5)
    # the work is spread over (nearly) every tile of the IPU
    conv = [cs for cs in graph.compute_sets if cs.name.endswith("Convolve")]
    tiles_used = np.unique(np.concatenate([b.tiles for cs in conv for b in cs.blocks]))
    assert tiles_used.size > 1400
    values = {name: RNG.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    _, out = run_program(graph, ipu2, prog, values, ["m5"])
    reference = values["m1"].astype(np.float64) @ values["m2"] @ values["m3"]
    relative = np.max(np.abs(out["m5"] - reference)) / np.max(np.abs(reference))
    assert relative < 1e-4


def test_matmul_of_uneven_shapes_on_few_tiles(device4):
    graph = Graph(device4.target)
    a = graph.add_variable(FLOAT, [7, 13], "a")
    b = graph.add_variable(FLOAT, [13, 5], "b")
    for x in (a, b):
        poputil.map_tensor_linearly(graph, x)
    prog = Sequence()
    c = poplin.mat_mul(graph, a, b, prog)
    graph.create_host_write("a", a)
    graph.create_host_write("b", b)
    graph.create_host_read("c", c)
    av, bv = (
        RNG.standard_normal((7, 13)).astype(np.float32),
        RNG.standard_normal((13, 5)).astype(np.float32),
    )
    _, out = run_program(graph, device4, prog, {"a": av, "b": bv}, ["c"])
    np.testing.assert_allclose(out["c"], av @ bv, rtol=1e-5, atol=1e-5)


def test_planner_keeps_temporary_memory_within_the_proportion():
    plan = plan_matmul(900, 600, 300, 4, "float", 1472, 638_976, 0.6)
    assert plan.fits_budget and plan.num_partials <= 1472 and plan.serial == 1
    blocks_cover = (plan.bm * plan.sm >= 900, plan.bn * plan.sn >= 300, plan.bk * plan.sk >= 600)
    assert all(blocks_cover)
    # temporary bytes by hand: operand blocks plus float partials
    assert plan.temp_bytes == (plan.bm * plan.bk + plan.bk * plan.bn) * 4 + plan.bm * plan.bn * 4


def test_planner_serialises_when_no_parallel_split_fits_the_proportion():
    """1% of a tile (6,389.76 bytes) is below what any parallel split needs: by AM-GM,
    blocks with bm * bn * bk >= 900 * 300 * 600 / 1472 need at least 3 * that ** (2/3)
    floats (27,558 bytes). As PopLibs does, the planner then computes the rows in serial
    slices, each slice's temporaries within the budget, at the cost of more cycles."""
    budget = 0.01 * 638_976
    assert budget < 3 * (900 * 300 * 600 / 1472) ** (2 / 3) * 4
    parallel = plan_matmul(900, 600, 300, 4, "float", 1472, 638_976, 0.6)
    tight = plan_matmul(900, 600, 300, 4, "float", 1472, 638_976, 0.01)
    assert tight.fits_budget and tight.temp_bytes <= budget
    assert tight.serial > 1 and tight.serial * tight.slice_rows >= 900
    assert (tight.serial - 1) * tight.slice_rows < 900  # no empty slice
    rows = tight.slice_rows
    assert tight.bm * tight.sm >= rows and tight.sm * tight.sn * tight.sk <= 1472
    assert tight.temp_bytes == (tight.bm * tight.bk + tight.bk * tight.bn) * 4 + (
        tight.bm * tight.bn * 4
    )
    # one slice's blocks still obey AM-GM: the slice is small enough for the budget
    assert 3 * (rows * 300 * 600 / 1472) ** (2 / 3) * 4 <= budget
    assert tight.cycles > parallel.cycles


def test_planner_takes_the_smallest_plan_when_nothing_fits():
    """[384, 1024] x [1024, 4096] at 1%: however the rows are sliced, each slice reads all
    of B, so some tile gets at least 1024 * 4096 / 1472 of its floats (11,397 bytes), more
    than 6,389 bytes: the planner takes the smallest plan, one row per slice."""
    budget = 0.01 * 638_976
    assert budget < 1024 * 4096 / 1472 * 4
    plan = plan_matmul(384, 1024, 4096, 4, "float", 1472, 638_976, 0.01)
    assert not plan.fits_budget and plan.temp_bytes >= 1024 * 4096 / 1472 * 4
    assert plan.serial == 384 and plan.slice_rows == 1


def test_matmul_shape_and_type_errors_name_the_operands(device4):
    graph = Graph(device4.target)
    a = graph.add_variable(FLOAT, [3, 4], "a")
    b = graph.add_variable(FLOAT, [5, 2], "b")
    i = graph.add_variable(INT, [4, 2], "ints")
    with pytest.raises(ShapeError, match=r"cannot multiply 'a' \(3, 4\) by 'b' \(5, 2\)"):
        poplin.mat_mul(graph, a, b, Sequence())
    with pytest.raises(TypeMismatchError, match="'a' is FLOAT but 'ints' is INT"):
        poplin.mat_mul(graph, a, i, Sequence())


def test_softmax_cross_entropy_and_relu_gradient_match_numpy(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [8, 5], "x")
    labels = graph.add_variable(INT, [8], "labels")
    for t in (x, labels):
        poputil.map_tensor_linearly(graph, t)
    prog = Sequence()
    probs = popnn.softmax(graph, x, prog)
    loss, deltas = popnn.calc_loss(graph, probs, labels, prog)
    activated = popnn.relu(graph, x, prog)
    grad = popnn.non_linearity_input_gradient(graph, "relu", activated, x, prog)
    sig = popnn.sigmoid(graph, x, prog)
    for name, t in (("x", x), ("labels", labels)):
        graph.create_host_write(name, t)
    for name, t in (
        ("probs", probs),
        ("loss", loss),
        ("deltas", deltas),
        ("grad", grad),
        ("sig", sig),
    ):
        graph.create_host_read(name, t)
    xv = RNG.standard_normal((8, 5)).astype(np.float32)
    lv = RNG.integers(0, 5, 8).astype(np.int32)
    _, out = run_program(
        graph, device4, prog, {"x": xv, "labels": lv}, ["probs", "loss", "deltas", "grad", "sig"]
    )
    p = np.exp(xv - xv.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out["probs"], p, rtol=1e-6)
    np.testing.assert_allclose(out["loss"], -np.log(p[np.arange(8), lv]), rtol=1e-5)
    expected_deltas = p.copy()
    expected_deltas[np.arange(8), lv] -= 1
    np.testing.assert_allclose(out["deltas"], expected_deltas, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(out["grad"], np.where(xv > 0, xv, 0))
    np.testing.assert_allclose(out["sig"], 1 / (1 + np.exp(-xv)), rtol=1e-6)
