"""What a compiled graph keeps, and the compile steps that work a chunk at a time: the
tile mapping's regions in int32 and summed per (variable, tile), exchange unions taken a
range of destination tiles at a time, runs cut at tile boundaries a chunk at a time -- each
against a plain per-element or per-region count -- and a compiled engine that holds no
compile-only structure (joined intervals, int64 addresses, a transposed weight copy)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from ipu_engine import IPUModel, Target
from ipu_engine.poplar import pool as pool_module
from ipu_engine.poplar.access import RunsAccess
from ipu_engine.poplar.cost_model import constants as C
from ipu_engine.poplar.cost_model import exchange, regions
from ipu_engine.poplar.cost_model.exchange import Transfer, plan_exchange
from ipu_engine.poplar.cost_model.memory import VariableRegions
from ipu_engine.poplar.pool import split_by_tile
from ipu_engine.poplar.runs import Runs, expand, narrowed
from ipu_engine.poplar.tile_map import TileMap
from tests.ipu_engine.onnx_helpers import assert_matches_ort, make_model


def _painted_tile_map(rng: np.random.Generator, sizes: list[int]) -> tuple[TileMap, np.ndarray]:
    """A tile map painted at random, and the per-element column painted the same way."""
    tile_map = TileMap()
    for n in sizes:
        tile_map.add_variable(n)
    column = np.full(sum(sizes), -1, dtype=np.int32)
    for _ in range(40):
        start = rng.integers(0, column.size, 5)
        length = np.minimum(rng.integers(1, 25, 5), column.size - start)
        tiles = rng.integers(0, 6, 5)
        tile_map.paint(start, length, tiles)
        for s, n, t in zip(start, length, tiles, strict=True):
            column[s : s + n] = t
    return tile_map, column


def test_variable_intervals_are_int32_and_cover_each_variable_as_painted() -> None:
    rng = np.random.default_rng(7)
    sizes = [40, 0, 75, 1, 130]
    tile_map, column = _painted_tile_map(rng, sizes)
    tile_map.runs()  # the joined intervals exist ...
    tile_map.forget_joined()  # ... and go: the intervals are read from each variable's own
    var, start, elements, tile = tile_map.variable_intervals()
    assert {a.dtype for a in (var, start, elements, tile)} == {np.dtype(np.int32)}
    bases = np.cumsum([0, *sizes[:-1]])
    rebuilt = np.repeat(tile, elements)
    addresses = expand(bases[var] + start, elements)
    np.testing.assert_array_equal(addresses, np.arange(column.size))
    np.testing.assert_array_equal(rebuilt, column)
    # and after forgetting, look-ups by address join them again
    addr = rng.integers(0, column.size, 30)
    np.testing.assert_array_equal(tile_map.element_tiles(addr), column[addr])
    # read again, the intervals are the same arrays (the mapping held once, not copied) ...
    again = tile_map.variable_intervals()
    assert again[1] is start and again[3] is tile
    # ... until a variable is mapped again
    tile_map.paint(np.array([41]), np.array([30]), 5)
    column[41:71] = 5
    var, start, elements, tile = tile_map.variable_intervals()
    np.testing.assert_array_equal(np.repeat(tile, elements), column)
    np.testing.assert_array_equal(tile_map.element_tiles(slice(0, column.size)), column)


def test_variable_tile_bytes_are_the_regions_summed_per_variable_and_tile(monkeypatch) -> None:
    monkeypatch.setattr(regions, "_CHUNK", 7)  # pairs split over chunks appear twice
    rng = np.random.default_rng(3)
    n = 60
    var = rng.integers(0, 5, n).astype(np.int32)
    tile = rng.integers(0, 4, n).astype(np.int32)
    elements = rng.integers(1, 40, n).astype(np.int32)
    element_size = np.array([4, 2, 1, 4, 8], dtype=np.int64)
    table = VariableRegions(var, tile, np.zeros(n, np.int32), elements)
    got = regions.variable_tile_bytes(table, element_size, num_tiles=4)
    expected: dict[tuple[int, int], list[int]] = {}
    for v, t, e in zip(var.tolist(), tile.tolist(), elements.tolist(), strict=True):
        size = e * int(element_size[v])
        padded = -(-size // C.DATA_ALIGNMENT) * C.DATA_ALIGNMENT
        sums = expected.setdefault((v, t), [0, 0])
        sums[0] += size
        sums[1] += padded
    summed: dict[tuple[int, int], list[int]] = {}
    for v, t, b, p in zip(got.var, got.tile, got.bytes, got.padded, strict=True):
        sums = summed.setdefault((int(v), int(t)), [0, 0])
        sums[0] += int(b)
        sums[1] += int(p)
    assert summed == expected
    assert got.var.size < n  # summed, not one row per region


def _traffic_by_sets(target: Target, transfers: list[Transfer]) -> dict[str, np.ndarray]:
    """Bytes in and out per tile, on and across IPUs, from sets of element addresses."""
    received: dict[tuple[int, int, int], set[int]] = {}
    for t in transfers:
        for s, n, a, b in zip(t.start, t.length, t.src_tile, t.dst_tile, strict=True):
            if a != b:
                received.setdefault((t.pool_id, int(b), int(a)), set()).update(
                    range(int(s), int(s + n))
                )
    sizes = {t.pool_id: t.elem_size for t in transfers}
    out = {k: np.zeros(target.num_tiles, np.int64) for k in ("on_in", "on_out", "x_in", "x_out")}
    for (pool_id, dst, src), addresses in received.items():
        moved = len(addresses) * sizes[pool_id]
        across = dst // target.tiles_per_ipu != src // target.tiles_per_ipu
        out["x_in" if across else "on_in"][dst] += moved
        out["x_out" if across else "on_out"][src] += moved
    return out


def test_exchange_unions_taken_a_tile_range_at_a_time_equal_address_sets(monkeypatch) -> None:
    monkeypatch.setattr(exchange, "_CHUNK_ROWS", 5)
    target = IPUModel("ipu2", num_ipus=2, tiles_per_ipu=4).create_device().target
    rng = np.random.default_rng(12)
    transfers = []
    for pool_id, elem_size in ((0, 4), (1, 2), (0, 4)):
        n = 40
        transfers.append(
            Transfer(
                rng.integers(0, 30, n).astype(np.int64),
                rng.integers(0, 6, n).astype(np.int64),  # some empty runs
                rng.integers(0, 8, n).astype(np.int32),
                rng.integers(0, 8, n).astype(np.int32),
                elem_size,
                pool_id,
            )
        )
    plan = plan_exchange(target, transfers)
    expected = _traffic_by_sets(target, transfers)
    for traffic, bytes_in, bytes_out in (
        (plan.on_ipu, "on_in", "on_out"),
        (plan.cross_ipu, "x_in", "x_out"),
    ):
        got_in = np.zeros(target.num_tiles, np.int64)
        got_out = np.zeros(target.num_tiles, np.int64)
        got_in[traffic.tiles] = traffic.bytes_in
        got_out[traffic.tiles] = traffic.bytes_out
        np.testing.assert_array_equal(got_in, expected[bytes_in])
        np.testing.assert_array_equal(got_out, expected[bytes_out])


def test_runs_cut_a_chunk_at_a_time_cover_the_runs_in_order(monkeypatch) -> None:
    monkeypatch.setattr(pool_module, "_CHUNK_RUNS", 3)
    rng = np.random.default_rng(5)
    sizes = [50, 30, 90]
    tile_map, column = _painted_tile_map(rng, sizes)
    start = rng.integers(0, column.size - 10, 11).astype(np.int64)
    length = rng.integers(0, 10, 11).astype(np.int64)  # some empty
    p_start, p_length, tile, run = split_by_tile(tile_map.runs(), column.size, start, length)
    np.testing.assert_array_equal(expand(p_start, p_length), expand(start, length))
    np.testing.assert_array_equal(np.repeat(tile, p_length), column[expand(start, length)])
    np.testing.assert_array_equal(np.repeat(run, p_length), np.repeat(np.arange(11), length))


def _conv_net() -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Conv -> BatchNormalization -> Relu -> MaxPool -> Conv: ResNet-50's first layers, small."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    weights = {
        "w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
        "scale": rng.random(8).astype(np.float32) + 0.5,
        "shift": rng.standard_normal(8).astype(np.float32),
        "mean": rng.standard_normal(8).astype(np.float32),
        "var": rng.random(8).astype(np.float32) + 0.5,
        "w2": rng.standard_normal((4, 8, 1, 1)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "scale", "shift", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2"], ["y"]),
    ]
    return make_model(nodes, {"x": x}, ["y"], weights), {"x": x}


def test_a_compiled_conv_net_keeps_no_compile_only_structure() -> None:
    """After compiling (outputs checked against onnxruntime), the tile maps hold no joined
    intervals, every vertex edge is int32 addresses or runs (no int64 per-element column),
    the regions kept for the report are int32, and a convolution's weight is the model's
    own array seen transposed, not a copy of it."""
    model, feeds = _conv_net()
    session = assert_matches_ort(model, feeds)
    engine = session.last.engine
    graph = engine.graph
    for pool in graph.pools.values():
        assert pool.tiles.joined_bytes == 0
    assert not engine.executable.lowering.tile_runs  # nor views of them kept by the lowering
    columns = [col for cs in graph.compute_sets for b in cs.blocks for col in b.edges.values()]
    columns += [
        f.column for plan in engine.executable.plans.values() for g in plan.groups
        for f in g.fields.values()
    ]  # fmt: skip
    assert columns
    for col in columns:
        held = [col.runs.start, col.runs.length] if col.runs is not None else [col._addr]
        assert all(a.dtype == np.int32 for a in held), [a.dtype for a in held]
    accesses = [
        a for plan in engine.executable.plans.values() for runner in plan.runners
        for a in getattr(runner, "access", {}).values() if isinstance(a, RunsAccess)
    ]  # fmt: skip
    assert accesses  # the runners' merged runs: int32 too
    for access in accesses:
        assert access.runs.start.dtype == access.runs.length.dtype == np.int32
    table = engine.model.regions
    assert {a.dtype for a in (table.var, table.tile, table.start, table.elements)} == {
        np.dtype(np.int32)
    }
    weights = session.last.traced.trace.weights()
    for name in ("w1", "w2"):
        assert np.shares_memory(weights[name], session.model.initializers[name]), name


def test_a_weight_made_by_constant_of_shape_holds_one_value_on_the_host() -> None:
    """ConstantOfShape -> Conv weight (how the onnx package's light models carry weights):
    the result equals onnxruntime's, and the host weight is a broadcast of one value."""
    x = np.random.default_rng(1).standard_normal((1, 2, 6, 6)).astype(np.float32)
    value = helper.make_tensor("value", onnx.TensorProto.FLOAT, [1], [0.25])
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["w"], value=value),
        helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
    ]
    model = make_model(nodes, {"x": x}, ["y"], {"shape": np.array([3, 2, 3, 3], np.int64)})
    session = assert_matches_ort(model, {"x": x})
    weight = session.last.traced.trace.weights()["w"]
    assert weight.shape == (3, 3, 2, 3) and set(weight.strides) == {0}


def test_runs_are_narrowed_only_when_their_ends_fit_in_int32() -> None:
    small = narrowed(Runs(np.array([0, 10], np.int64), np.array([5, 5], np.int64)))
    assert small.start.dtype == small.length.dtype == np.int32
    edge = 2**31 - 4  # starts and lengths fit, but the run ends at 2**31
    wide = narrowed(Runs(np.array([edge], np.int64), np.array([4], np.int64)))
    assert wide.start.dtype == np.int64 and int(wide.start[0] + wide.length[0]) == 2**31
