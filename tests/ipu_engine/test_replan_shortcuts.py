"""What-if predictions (issue 41) made with the compiler's shortcuts equal those made without
them: a compute set's exchanges from runs unioned per tile (``vertex_exchange``), a view's
tiles read from its own variable's intervals, a column compressed after counting its runs,
elements grouped by tile with a 16-bit sort and an op's output mapped interval by interval
like its operand -- against the plain way each replaced (runs cut at every mapping interval
and unioned per tile pair, the pool's joined intervals, runs made before they are counted,
a sort of the tiles as they are, a tile per element). Each model's re-plans, with
and without changes, must give the same figures and the same compile model, array for
array; one model is pipelined over four IPUs (exchanges across IPUs), another split over two."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ipu_engine.poplar.arrays import search_many
from ipu_engine.poplar.compiler import access_sets, lower
from ipu_engine.poplar.compiler.executable import check_programs, lower_programs
from ipu_engine.poplar.cost_model.compile_model import build_compile_model
from ipu_engine.poplar.cost_model.exchange import Transfer, plan_exchange
from ipu_engine.poplar.pool import split_by_tile
from ipu_engine.poplar.runs import worth_runs
from ipu_engine.poplar.tile_map import TileMap
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poputil import library_op
from ipu_engine.replan import Change, predict, replay
from profiler_core.formats.serialized_graph import GRAPH_FILE, read_serialized_graph
from tests.conftest import run_example_with_reports


def _facts_by_pieces(graph, plan, tile_runs=None) -> access_sets.ComputeSetFacts:
    """A compute set's facts the plain way: every run cut where the mapping changes, the
    remote pieces unioned per (destination, source) tile pair."""
    pool_ids = {t: i for i, t in enumerate(graph.pools)}
    reads, writes, pre, post = [], [], [], []
    for group in plan.groups:
        for name, f in group.fields.items():
            col = f.column
            if col.size == 0:
                continue
            pool = graph.pool(f.type)
            runs, edge = col.edge_runs()
            var_ids = pool.variables_in_runs(runs.start, runs.length)
            start, length, element_tiles, run = split_by_tile(
                pool.tile_runs(), pool.size, runs.start, runs.length
            )
            vertex_tiles = group.tiles[group.edge_vertex(name)[edge[run]]]
            size, pid = f.type.size, pool_ids[f.type]
            if f.spec.direction.reads:
                reads.append(var_ids)
                pre.append(Transfer(start, length, element_tiles, vertex_tiles, size, pid))
            if f.spec.direction.writes:
                writes.append(var_ids)
                post.append(Transfer(start, length, vertex_tiles, element_tiles, size, pid))
    return access_sets.ComputeSetFacts(
        access_sets._union(reads),
        access_sets._union(writes),
        plan_exchange(graph.target, pre),
        plan_exchange(graph.target, post),
    )


def _element_tiles_joined(self: TileMap, index):
    if isinstance(index, slice):
        return _element_tiles(self, index)
    starts, tiles = self.runs()
    return tiles[search_many(starts, np.asarray(index, dtype=np.int64)) - 1]


_element_tiles = TileMap.element_tiles


def _compressed_runs_first(self: EdgeColumn) -> EdgeColumn:
    if self.runs is not None or self.edges_of_vertex is not None:
        return self
    runs, edge = self.edge_runs()
    if not worth_runs(len(runs), self.size):
        return self
    run_offsets = np.searchsorted(edge, np.arange(len(self.offsets)), side="left")
    return EdgeColumn(None, self.offsets, runs=runs, run_offsets=run_offsets.astype(np.int64))


def _without_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lower, "compute_set_facts", _facts_by_pieces)
    monkeypatch.setattr(TileMap, "element_tiles", _element_tiles_joined)
    monkeypatch.setattr(EdgeColumn, "compressed", _compressed_runs_first)
    monkeypatch.setattr(library_op, "_sort_key", lambda tiles: tiles)
    monkeypatch.setattr(library_op, "_map_like", lambda *args: None)


def _model_arrays(record: dict, arrays: dict, change: Change | None) -> dict[str, np.ndarray]:
    """The re-planned graph's compile model, and each exchange step's traffic."""
    replayed = replay(record, arrays, change)
    graph = replayed.graph
    exe = lower_programs(graph, check_programs(graph, replayed.programs))
    model = build_compile_model(graph, exe, replayed.instrument)
    out = {
        "step_cycles": model.step_cycles,
        "live_bytes": model.live_bytes,
        "var_bytes": model.var_bytes,
    }
    for f in dataclasses.fields(model.memory):
        value = getattr(model.memory, f.name)
        if isinstance(value, np.ndarray):
            out[f"memory.{f.name}"] = value
    for step in exe.steps:
        traffic = step.facts.get("traffic")
        if traffic is not None:
            out[f"{step.id}.in"] = traffic.bytes_in
            out[f"{step.id}.tiles"] = traffic.tiles
        for key in ("reads", "writes"):
            out[f"{step.id}.{key}"] = np.asarray(step.facts.get(key, []))
    return out


#: example -> the folder of its report (its engine program's name)
EXAMPLES = {"onnx_cnn": "onnx_cnn", "pipelined_model": "pipelined"}


@pytest.fixture(scope="module", params=list(EXAMPLES))
def recorded(request, tmp_path_factory) -> tuple[str, dict, dict]:
    directory = tmp_path_factory.mktemp(request.param)
    run_example_with_reports(f"{request.param}.py", directory)
    graph = read_serialized_graph(directory / EXAMPLES[request.param] / GRAPH_FILE)
    return request.param, graph.record, graph.arrays


def _changes(name: str, record: dict) -> list[Change | None]:
    """The program as recorded and with its weights in half; the CNN also split over two
    IPUs (the pipelined program crosses IPUs as it is)."""
    weights = tuple(str(k) for k, _ in record["trace"]["params"])
    half = Change("", "type", "half", weights)
    return [None, half, Change("", "ipus", 2)] if name == "onnx_cnn" else [None, half]


def test_predictions_with_shortcuts_equal_those_without(recorded, monkeypatch) -> None:
    name, record, arrays = recorded
    changes = _changes(name, record)
    fast = [predict(record, arrays, c, [0]) for c in changes]
    fast_models = [_model_arrays(record, arrays, c) for c in changes]
    _without_shortcuts(monkeypatch)
    plain = [predict(record, arrays, c, [0]) for c in changes]
    assert fast == plain
    stepped = 0
    for change, got in zip(changes, fast_models, strict=True):
        want = _model_arrays(record, arrays, change)
        assert got.keys() == want.keys(), change
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, err_msg=f"{change}: {key}")
            assert got[key].dtype == value.dtype, key
        stepped += int((want["step_cycles"] > 0).sum())
    assert stepped and all(f.total_cycles for f in fast)
