"""A compute set's exchanges from its vertices' runs unioned per tile (``vertex_exchange``)
against a count element by element: for random runs over a randomly painted mapping on a
two-IPU target, both ways of counting (unions cut at the mapping, or the mapping's whole
intervals counted), and for every compute set of a small conv net as the compiler plans it."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine import IPUModel, Target
from ipu_engine.poplar.compiler.access_sets import compute_set_facts
from ipu_engine.poplar.cost_model import vertex_exchange
from ipu_engine.poplar.cost_model.exchange import ExchangePlan
from ipu_engine.poplar.cost_model.vertex_exchange import (
    ExchangeSums,
    PoolMapping,
    add_vertex_exchange,
    tile_unions,
)
from ipu_engine.poplar.tile_map import TileMap
from tests.ipu_engine.onnx_helpers import assert_matches_ort
from tests.ipu_engine.test_compile_memory import _conv_net

KINDS = ("on_in", "on_out", "x_in", "x_out")


def _target() -> Target:
    return IPUModel("ipu2", num_ipus=2, tiles_per_ipu=5).create_device().target


def _by_elements(
    target: Target, column: np.ndarray, reads: list, writes: list
) -> dict[str, np.ndarray]:
    """Bytes per tile counted one element at a time: a tile receives each element it
    reads from another tile once, and sends each element its vertices write to the
    element's tile once (per pool: ``column`` is the tile of each of its elements)."""
    out = {k: np.zeros(target.num_tiles, np.int64) for k in KINDS}
    for accesses, gather in ((reads, True), (writes, False)):
        for elem_size, tile, start, length in accesses:
            touched = set()
            for v, s, n in zip(tile.tolist(), start.tolist(), length.tolist(), strict=True):
                touched.update((v, a) for a in range(s, s + n))
            for v, a in touched:
                t = int(column[a])
                if t == v:
                    continue
                dst, src = (v, t) if gather else (t, v)
                across = dst // target.tiles_per_ipu != src // target.tiles_per_ipu
                out["x_in" if across else "on_in"][dst] += elem_size
                out["x_out" if across else "on_out"][src] += elem_size
    return out


def _variables_of_runs(
    sizes: list[int], ids: np.ndarray, start: np.ndarray, length: np.ndarray
) -> list[int]:
    """The ids of the variables holding an element of a run, and of the empty variables
    a run passes over (an empty variable between two of a run's elements, as the
    compiler has always counted it), sorted."""
    found = set()
    base = 0
    for size, var in zip(sizes, ids.tolist(), strict=True):
        for s, n in zip(start.tolist(), length.tolist(), strict=True):
            if n and (s < base + size and base < s + n if size else s < base < s + n):
                found.add(var)
        base += size
    return sorted(found)


def _as_arrays(target: Target, plan: ExchangePlan) -> dict[str, np.ndarray]:
    out = {}
    for traffic, bytes_in, bytes_out in (
        (plan.on_ipu, "on_in", "on_out"),
        (plan.cross_ipu, "x_in", "x_out"),
    ):
        out[bytes_in] = np.zeros(target.num_tiles, np.int64)
        out[bytes_out] = np.zeros(target.num_tiles, np.int64)
        out[bytes_in][traffic.tiles] = traffic.bytes_in
        out[bytes_out][traffic.tiles] = traffic.bytes_out
    return out


def _mapping(rng: np.random.Generator, sizes: list[int], tiles: int) -> tuple[TileMap, np.ndarray]:
    """A pool mapped coarsely in places and one element per interval in others."""
    tile_map = TileMap()
    for n in sizes:
        tile_map.add_variable(n)
    column = np.zeros(sum(sizes), dtype=np.int32)
    tile_map.paint(np.array([0]), np.array([column.size]), 0)
    for _ in range(30):
        start = int(rng.integers(0, column.size))
        n = int(min(rng.integers(1, 40), column.size - start))
        fine = rng.random() < 0.5
        run_tiles = rng.integers(0, tiles, n if fine else 1)
        if fine:
            tile_map.paint(np.arange(start, start + n), np.ones(n), run_tiles)
            column[start : start + n] = run_tiles
        else:
            tile_map.paint(np.array([start]), np.array([n]), run_tiles)
            column[start : start + n] = run_tiles[0]
    return tile_map, column


@pytest.mark.parametrize("count_over", [0, 10**9])  # always cut / always count
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_unions_per_tile_move_what_an_element_count_moves(monkeypatch, count_over, seed) -> None:
    monkeypatch.setattr(vertex_exchange, "_COUNT_OVER", count_over)
    monkeypatch.setattr(vertex_exchange, "_CHUNK_PIECES", 7)
    target = _target()
    rng = np.random.default_rng(seed)
    sizes = [120, 7, 0, 200, 30]
    tile_map, column = _mapping(rng, sizes, target.num_tiles)
    run_start, run_tile = tile_map.runs()
    ids = np.arange(len(sizes)) * 3 + 1  # graph-wide ids of the pool's variables
    mapping = PoolMapping(run_start, run_tile, tile_map.size, tile_map.runs_variables(), ids)
    reads, writes = [], []
    pre, post = ExchangeSums(target), ExchangeSums(target)
    for accesses, gather, sums in ((reads, True, pre), (writes, False, post)):
        n = 60
        start = rng.integers(0, tile_map.size - 50, n)
        length = rng.integers(0, 50, n)  # some empty, many overlapping
        length[:20] = 1
        start[:20] = start[0]  # a broadcast: one element read by many vertices
        tile = rng.integers(0, target.num_tiles, n)
        accesses.append((4, tile, start, length))
        touched = add_vertex_exchange(
            sums, mapping, tile_unions(tile, start, length, tile_map.size), 4, gather
        )
        assert touched.tolist() == _variables_of_runs(sizes, ids, start, length)
    expected = _by_elements(target, column, reads, [])
    got = _as_arrays(target, pre.plan())
    for kind in KINDS:
        np.testing.assert_array_equal(got[kind], expected[kind], err_msg=kind)
    expected = _by_elements(target, column, [], writes)
    got = _as_arrays(target, post.plan())
    for kind in KINDS:
        np.testing.assert_array_equal(got[kind], expected[kind], err_msg=kind)


@pytest.mark.parametrize("pool_size", [120, 2**61])  # a key of tile and address, or not
def test_tile_unions_are_each_tiles_elements_in_disjoint_intervals(pool_size) -> None:
    rng = np.random.default_rng(7)
    tile = rng.integers(0, 4, 80)
    start = rng.integers(0, 100, 80)
    length = rng.integers(0, 9, 80)
    unions = tile_unions(tile, start, length, pool_size)
    for t in range(4):
        mine = unions.tile == t
        got = [
            a
            for s, e in zip(unions.start[mine], unions.end[mine], strict=True)
            for a in range(s, e)
        ]
        want = sorted(
            {
                a
                for s, n in zip(start[tile == t], length[tile == t], strict=True)
                for a in range(s, s + n)
            }
        )
        assert got == want  # in order, each element once: disjoint and sorted
    assert (unions.end > unions.start).all()


def test_a_conv_nets_compute_set_exchanges_equal_an_element_count() -> None:
    """Every compute set of a small conv net (outputs checked against onnxruntime): its
    exchanges before and after the compute equal a count over its fields' addresses, and
    the variables it reads and writes are those its fields' addresses lie in."""
    model, feeds = _conv_net()
    session = assert_matches_ort(model, feeds)
    engine = session.last.engine
    graph, target = engine.graph, engine.graph.target
    plans = engine.executable.plans
    moved = 0
    for plan in plans.values():
        facts = compute_set_facts(graph, plan)
        reads, writes = {}, {}
        read_vars, write_vars = set(), set()
        for group in plan.groups:
            for name, f in group.fields.items():
                col = f.column
                if col.size == 0:
                    continue
                vertex = group.edge_vertex(name)
                tiles = np.repeat(group.tiles[vertex], np.diff(col.offsets))
                addr = col.addr.astype(np.int64)
                pool = graph.pool(f.type)
                item = (f.type.size, tiles, addr, np.ones(addr.size, np.int64))
                if f.spec.direction.reads:
                    reads.setdefault(f.type, []).append(item)
                    read_vars.update(pool.variables_of(addr).tolist())
                if f.spec.direction.writes:
                    writes.setdefault(f.type, []).append(item)
                    write_vars.update(pool.variables_of(addr).tolist())
        assert facts.reads.tolist() == sorted(read_vars)
        assert facts.writes.tolist() == sorted(write_vars)
        for by_type, exchange in ((reads, facts.pre), (writes, facts.post)):
            total = {k: np.zeros(target.num_tiles, np.int64) for k in KINDS}
            for elem_type, items in by_type.items():
                column = graph.pool(elem_type).tiles.element_tiles(slice(None))
                counted = _by_elements(
                    target,
                    column,
                    items if by_type is reads else [],
                    items if by_type is writes else [],
                )
                for kind in KINDS:
                    total[kind] += counted[kind]
            got = _as_arrays(target, exchange)
            for kind in KINDS:
                np.testing.assert_array_equal(got[kind], total[kind], err_msg=kind)
            moved += int(total["on_in"].sum())
    assert moved > 0  # the net's compute sets do exchange
