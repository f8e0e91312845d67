"""An ONNX model's weights as PopART makes them: a weight read by a matmul is created in its
plan's layout (never received as a copy), and ``ipus=N`` splits the nodes by the weight
bytes each really places on its IPU, whatever made the weight."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto, helper

from ipu_engine.onnx.lowering.walk import balanced_groups, weight_bytes
from ipu_engine.onnx.model import load_model
from tests.ipu_engine.onnx_helpers import assert_matches_ort, make_model

rng = np.random.default_rng(27)


def _received(session, step_suffix: str) -> int:
    return sum(
        int(s.facts["traffic"].bytes_in.sum())
        for s in session.last.engine.executable.steps
        if s.name.endswith(step_suffix)
    )


def test_a_gemm_weight_is_made_in_its_plans_layout_and_never_copied():
    x = rng.standard_normal((1, 64)).astype(np.float32)
    w = rng.standard_normal((48, 64)).astype(np.float32)  # [N, K], used transposed
    b = rng.standard_normal(48).astype(np.float32)
    gemm = helper.make_node("Gemm", ["x", "W", "b"], ["y"], transB=1)
    session = assert_matches_ort(make_model([gemm], {"x": x}, ["y"], {"W": w, "b": b}), {"x": x})
    graph = session.last.graph
    (weight,) = session.last.built.params["W"]
    # transposed on the host: the device holds W' [K, N] as one whole variable
    assert weight.shape == (64, 48) and weight.pool_range() is not None
    (plan,) = [c.args["plan"] for c in graph.debug.items if c.api == "poplin::matMul"]
    assert plan == [1, 24, 1]  # 24 column blocks of 2 on 32 tiles; M and K whole
    # by hand: block j (64 rows x 2 columns, 512 bytes) on tile j * 32 // 24, so every
    # fourth tile holds none of W'
    per_tile = np.bincount(graph.tile_array(weight), minlength=32) * 4
    assert per_tile.tolist() == [512, 512, 512, 0] * 8
    # the product receives x only: x [1, 64] is streamed 2 floats a tile, and each of the
    # 24 vertices needs all 64, 62 of them from other tiles; W' is read where it lives
    assert _received(session, "Convolve/ExchangePre") == 24 * 62 * 4


def test_one_initializer_read_transposed_and_as_it_is_gives_two_weights():
    x = rng.standard_normal((2, 16)).astype(np.float32)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "W"], ["h"], transB=1),  # x @ W.T
        helper.make_node("MatMul", ["h", "W"], ["y"]),  # h @ W
    ]
    session = assert_matches_ort(make_model(nodes, {"x": x}, ["y"], {"W": w}), {"x": x})
    assert set(session.last.traced.trace.params) == {"W", "W/view1"}


def _constant_weights_model(widths: list[int]) -> tuple:
    """x [1, widths[0]] through MatMuls whose weights are ConstantOfShape outputs (as the
    onnx package's light models make theirs), each followed by a Relu."""
    nodes, weights = [], {}
    value = helper.make_tensor("value", TensorProto.FLOAT, [1], [0.01])
    previous = "x"
    for i, (k, n) in enumerate(itertools.pairwise(widths)):
        weights[f"shape{i}"] = np.array([k, n], dtype=np.int64)
        nodes.append(helper.make_node("ConstantOfShape", [f"shape{i}"], [f"w{i}"], value=value))
        nodes.append(helper.make_node("MatMul", [previous, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"]))
        previous = f"r{i}"
    x = rng.standard_normal((1, widths[0])).astype(np.float32)
    return make_model(nodes, {"x": x}, [previous], weights), x, previous


def test_weight_bytes_count_weights_made_by_constant_of_shape():
    model, _, _ = _constant_weights_model([8, 16, 512, 8])
    weights, on_device = weight_bytes(load_model(model))
    # ConstantOfShape folds on the host; each MatMul places its [k, n] float32 weight
    assert weights.tolist() == [0, 8 * 16 * 4, 0, 0, 16 * 512 * 4, 0, 0, 512 * 8 * 4, 0]
    assert on_device.tolist() == [False, True, True] * 3


@pytest.mark.parametrize(("ipus", "shards"), [(2, [0, 0, 1]), (3, [0, 1, 2])])
def test_ipus_split_the_nodes_by_the_weights_they_place(ipus, shards):
    # weights of 512, 32768 and 16384 bytes: on 2 IPUs the least largest share is
    # 512 + 32768 beside 16384 (the other cut gives 32768 + 16384 = 49152)
    model, x, _ = _constant_weights_model([8, 16, 512, 8])
    session = assert_matches_ort(model, {"x": x}, ipus=ipus)
    matmuls = [n for n in session.last.traced.trace.nodes if n.op == "matmul"]
    assert [n.shard for n in matmuls] == shards
    assert [n.inputs[1].shard for n in matmuls] == shards  # each weight beside its reader


def _least_largest_share(sizes: list[int], parts: int) -> int:
    """Brute force: every way to cut ``sizes`` into ``parts`` consecutive non-empty groups."""
    best = None
    for cuts in itertools.combinations(range(1, len(sizes)), parts - 1):
        bounds = (0, *cuts, len(sizes))
        largest = max(sum(sizes[a:b]) for a, b in itertools.pairwise(bounds))
        best = largest if best is None else min(best, largest)
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(20))
def test_balanced_groups_find_the_least_largest_share(seed):
    draw = np.random.default_rng(seed)
    sizes = draw.integers(1, 1000, draw.integers(1, 10)).tolist()
    if seed % 3 == 0:
        sizes[draw.integers(len(sizes))] *= 50  # one weight much larger than the rest
    parts = int(draw.integers(1, 6))
    groups = balanced_groups(np.array(sizes), parts)
    used = min(parts, len(sizes))
    assert groups.tolist() == sorted(groups.tolist())  # consecutive
    assert sorted(set(groups.tolist())) == list(range(used))  # none empty
    shares = np.bincount(groups, weights=sizes)
    assert shares.max() == _least_largest_share(sizes, used)
