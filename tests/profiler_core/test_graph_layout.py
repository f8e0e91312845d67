"""The Operations graph's layered layout: every edge points down (a node's layer is below
each input's), no two nodes of a layer overlap, long edges bend between layers, and a cycle
(a folded layer can make one) is laid out with its back edge drawn upwards."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.graph_layout import LAYER_GAP, NODE_GAP, layered_layout


def random_dag(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A trace-like DAG: each node reads one to three earlier nodes, mostly recent ones
    (a chain with skips and weights), as a model's trace does."""
    rng = np.random.default_rng(seed)
    src, dst = [], []
    for node in range(1, n):
        for _ in range(rng.integers(1, 4)):
            back = min(node, int(rng.geometric(0.35)))
            src.append(node - back)
            dst.append(node)
    return np.array(src), np.array(dst)


def assert_layered(layout, src, dst) -> None:
    up = layout.edge_up
    a = np.where(up, layout.edge_dst, layout.edge_src)
    b = np.where(up, layout.edge_src, layout.edge_dst)
    assert (layout.layer[b] > layout.layer[a]).all()
    assert np.allclose(layout.y, layout.layer * LAYER_GAP)
    for k in np.unique(layout.layer):
        mine = np.flatnonzero(layout.layer == k)
        order = mine[np.argsort(layout.x[mine])]
        room = np.diff(layout.x[order]) - (layout.width[order][:-1] + layout.width[order][1:]) / 2
        assert (room >= NODE_GAP - 1e-6).all(), f"layer {k} overlaps"
    distinct = {(int(s), int(d)) for s, d in zip(src, dst, strict=True) if s != d}
    assert set(zip(layout.edge_src.tolist(), layout.edge_dst.tolist(), strict=True)) == distinct


@pytest.mark.parametrize(("n", "seed"), [(2, 0), (40, 1), (300, 2), (1200, 3)])
def test_every_edge_points_down_and_no_two_nodes_of_a_layer_overlap(n, seed):
    src, dst = random_dag(n, seed)
    layout = layered_layout(n, src, dst)
    assert not layout.edge_up.any()
    assert_layered(layout, src, dst)


def test_a_long_edge_bends_between_layers_and_joins_its_ends():
    # a chain 0 -> 1 -> 2 -> 3 -> 4 with a skip 0 -> 4: four segments for the skip
    src, dst = np.array([0, 1, 2, 3, 0]), np.array([1, 2, 3, 4, 4])
    layout = layered_layout(5, src, dst)
    skip = int(np.flatnonzero((layout.edge_src == 0) & (layout.edge_dst == 4))[0])
    mine = np.flatnonzero(layout.seg_edge == skip)
    assert len(mine) == 4 and layout.seg_first[mine].sum() == 1
    # it leaves the bottom of node 0 and reaches the top of node 4, continuously
    half = layout.height / 2
    assert (layout.seg_x0[mine[0]], layout.seg_y0[mine[0]]) == (layout.x[0], layout.y[0] + half)
    assert np.isclose(layout.seg_x1[mine[-1]], layout.x[4])
    assert np.isclose(layout.seg_y1[mine[-1]], layout.y[4] - half)
    assert np.allclose(layout.seg_x1[mine[:-1]], layout.seg_x0[mine[1:]])
    # the bend points make room beside the chain: the skip does not run through nodes 1-3
    bends = layout.seg_x1[mine[:-1]]
    assert (np.abs(bends - layout.x[[1, 2, 3]]) >= layout.width[1] / 2).all()


def test_a_weight_sits_just_above_the_op_that_reads_it():
    # input 0 -> a -> b -> c (1, 2, 4); weight 3 (traced before c) read by c only
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 2, 4, 4])
    layout = layered_layout(5, src, dst)
    assert layout.layer[3] == layout.layer[4] - 1 == 2


def test_a_back_edge_is_laid_out_reversed_and_marked_up():
    # 0 -> 1 -> 2 and 2 -> 1 (a folded layer that two nodes in and out of it make)
    src, dst = np.array([0, 1, 2]), np.array([1, 2, 1])
    layout = layered_layout(3, src, dst, order_key=np.array([0, 1, 2]))
    back = (layout.edge_src == 2) & (layout.edge_dst == 1)
    assert layout.edge_up[back].all() and layout.edge_up.sum() == 1
    assert_layered(layout, src, dst)


@pytest.mark.parametrize("n", [0, 1])
def test_an_empty_graph_and_a_single_node_lay_out(n):
    layout = layered_layout(n, np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert len(layout.x) == n and len(layout.seg_x0) == 0
    left, top, right, bottom = layout.bounds
    assert right > left and bottom > top
