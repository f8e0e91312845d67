"""``with ipu_engine.shard(i):`` places ops on IPU i; values crossing IPUs are exchanged
over the IPU-Links, which the compile model counts as GlobalExchange steps."""

import numpy as np

import ipu_engine as ie
from ipu_engine.poplar.compiler.steps import StepKind
from ipu_engine.poplar.cost_model.compile_model import build_compile_model

A = np.array([1, 1], dtype=np.float32)
B = np.array([0, 1], dtype=np.float32)
C = np.array([1, 5], dtype=np.float32)


def four_shards(a, b, c):
    with ie.shard(0):
        o1 = a + b
    with ie.shard(1):
        o2 = a + c
    with ie.shard(2):
        o3 = b + c
    with ie.shard(3):
        return o1 + o2 + o3


def test_four_shards_add_up_on_four_ipus_with_vertices_on_each():
    fn = ie.function(four_shards, num_ipus=4)
    assert fn(A, B, C).tolist() == [4.0, 14.0]  # [1,2] + [2,6] + [1,6]
    graph = fn.last.graph
    assert graph.target.num_ipus == 4
    tiles_per_ipu = graph.target.tiles_per_ipu
    vertex_ipus = {
        int(t) // tiles_per_ipu for cs in graph.compute_sets for b in cs.blocks for t in b.tiles
    }
    assert vertex_ipus == {0, 1, 2, 3}
    # each compute set is one op, wholly on its shard's IPU
    per_cs = [
        {int(t) // tiles_per_ipu for b in cs.blocks for t in b.tiles} for cs in graph.compute_sets
    ]
    assert per_cs == [{0}, {1}, {2}, {3}, {3}]


def test_values_crossing_ipus_become_global_exchange_traffic_between_those_ipus():
    fn = ie.function(four_shards, num_ipus=4)
    fn(A, B, C)
    exe = fn.last.engine.executable
    model = build_compile_model(fn.last.graph, exe, False)
    per_ipu = fn.last.graph.target.tiles_per_ipu
    crossings = set()
    for step in exe.steps:
        if step.kind is StepKind.GLOBAL_EXCHANGE:
            traffic = step.facts["traffic"]
            assert traffic.total_bytes > 0
            receivers = {
                int(t) // per_ipu for t, n in zip(traffic.tiles, traffic.bytes_in, strict=True) if n
            }
            senders = {
                int(t) // per_ipu
                for t, n in zip(traffic.tiles, traffic.bytes_out, strict=True)
                if n
            }
            crossings.add((frozenset(senders), frozenset(receivers)))
            assert (model.step_cycles[step.id][sorted(receivers)] > 0).all()
    # a goes 0 -> 1; b (IPU 0) and c (IPU 1) go to 2; o1, o2 go to 3, then o3
    assert crossings == {
        (frozenset({0}), frozenset({1})),
        (frozenset({0, 1}), frozenset({2})),
        (frozenset({0, 1}), frozenset({3})),
        (frozenset({2}), frozenset({3})),
    }
    # a, b, c, o1, o2 and o3 each cross once: 2 float32 elements of 4 bytes each
    total = sum(
        s.facts["traffic"].total_bytes for s in exe.steps if s.kind is StepKind.GLOBAL_EXCHANGE
    )
    assert total == 6 * 2 * 4


def test_without_num_ipus_the_target_has_as_many_ipus_as_the_shards_used():
    fn = ie.function(four_shards)
    fn(A, B, C)
    assert fn.last.graph.target.num_ipus == 4
