"""Runs of addresses (issue 18): conversions, exchange unions against per-element counts,
matmul on irregular views against numpy, and a graph too large for the host."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ipu_engine import FLOAT, Graph, HostMemoryError, IPUModel, Sequence, poplin, poputil
from ipu_engine.poplar.arrays import search_many
from ipu_engine.poplar.cost_model.exchange import union_lengths
from ipu_engine.poplar.pool import split_by_tile
from ipu_engine.poplar.runs import block_runs, expand, runs_of
from profiler_core.formats.profile_pop.reader import ProfileReader
from tests.conftest import run_example_with_reports
from tests.ipu_engine.conftest import run_program


def test_runs_round_trip_views() -> None:
    a = np.arange(240).reshape(12, 20)
    for view in (a[2:7, 3:9], a[2:7, :], a.T[1:4, 2:8], a[::3, 1:4], a[5:6], a[:, ::-1]):
        runs = block_runs(view)
        assert np.array_equal(runs.addresses(), view.reshape(-1))
        assert np.array_equal(runs_of(view).addresses(), view.reshape(-1))
    assert len(block_runs(a[2:7, 3:9])) == 5  # one run per row of the block
    assert len(block_runs(a[2:7, :])) == 1  # whole rows join into one run
    assert np.array_equal(expand(np.array([7, 0, 3]), np.array([2, 0, 3])), [7, 8, 3, 4, 5])


def test_expand_runs_of_one_length_and_of_mixed_lengths() -> None:
    """Runs of one length (a matrix's blocks) take a one-pass path: the same addresses as
    listing each run by hand, unordered and overlapping runs included."""
    start = np.array([40, 3, 10, 3], dtype=np.int64)
    assert np.array_equal(expand(start, np.full(4, 3)), [40, 41, 42, 3, 4, 5, 10, 11, 12, 3, 4, 5])
    mixed = np.array([3, 1, 2, 0])
    assert np.array_equal(expand(start, mixed), [40, 41, 42, 3, 10, 11])
    # lengths summing as if uniform but not uniform
    assert np.array_equal(expand(start[:2], np.array([0, 4])), [3, 4, 5, 6])


@pytest.mark.parametrize("key_scale", [1, 2**55])  # keys x starts past int64: lexsort
def test_union_lengths_equal_distinct_element_counts(key_scale: int) -> None:
    rng = np.random.default_rng(3)
    key = rng.integers(0, 5, 400) * key_scale
    start = rng.integers(0, 1000, 400) + 2**31 * (key_scale > 1)
    end = start + rng.integers(0, 60, 400)
    keys, lengths = union_lengths(key, start, end)
    for k, n in zip(keys.tolist(), lengths.tolist(), strict=True):
        sel = key == k
        covered = set()
        for s, e in zip(start[sel].tolist(), end[sel].tolist(), strict=True):
            covered.update(range(s, e))
        assert n == len(covered)


def test_split_by_tile_cuts_runs_at_the_mapping() -> None:
    tiles = np.array([0, 0, 1, 1, 1, 2, 0, 0, 3, 3])
    starts = np.concatenate(([0], np.flatnonzero(np.diff(tiles)) + 1))
    start, length, tile, run = split_by_tile(
        (starts, tiles[starts]), tiles.size, np.array([1, 4, 9, 0]), np.array([6, 5, 1, 0])
    )
    pieces = list(zip(start.tolist(), length.tolist(), tile.tolist(), run.tolist(), strict=True))
    assert pieces == [(1, 1, 0, 0), (2, 3, 1, 0), (5, 1, 2, 0), (6, 1, 0, 0), (4, 1, 1, 1),
                      (5, 1, 2, 1), (6, 2, 0, 1), (8, 1, 3, 1), (9, 1, 3, 2)]  # fmt: skip


@pytest.mark.parametrize("layout", ["plain", "transposed", "strided", "concat", "broadcast"])
def test_matmul_on_irregular_views_equals_numpy(layout: str) -> None:
    device = IPUModel("ipu2", tiles_per_ipu=16).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [40, 60], "x")
    y = graph.add_variable(FLOAT, [60, 30], "y")
    extra = graph.add_variable(FLOAT, [20, 30], "extra")
    for t in (x, y, extra):
        poputil.map_tensor_linearly(graph, t)
    for name, t in (("x", x), ("y", y), ("extra", extra)):
        graph.create_host_write(name, t)
    a, b = {
        "plain": (x, y),
        "transposed": (y.transpose(), x.transpose()),
        "strided": (x.subsample(2, 1), y.subsample(2, 0)),
        "concat": (x, y.slice(0, 40, 0).concat(extra, 0)),
        "broadcast": (x.slice(0, 1, 0).broadcast(40, 0), y),
    }[layout]
    prog = Sequence()
    c = poplin.mat_mul(graph, a, b, prog, "c", {"availableMemoryProportion": 0.02})
    graph.create_host_read("c", c)
    rng = np.random.default_rng(1)
    values = {
        "x": rng.standard_normal((40, 60)).astype(np.float32),
        "y": rng.standard_normal((60, 30)).astype(np.float32),
        "extra": rng.standard_normal((20, 30)).astype(np.float32),
    }
    _, out = run_program(graph, device, prog, values, reads=["c"])
    xv, yv, ev = values["x"], values["y"], values["extra"]
    ha, hb = {
        "plain": (xv, yv),
        "transposed": (yv.T, xv.T),
        "strided": (xv[:, ::2], yv[::2]),
        "concat": (xv, np.concatenate([yv[:40], ev])),
        "broadcast": (np.repeat(xv[:1], 40, 0), yv),
    }[layout]
    expected = ha.astype(np.float64) @ hb
    assert np.max(np.abs(out["c"] - expected)) <= 1e-4 * np.max(np.abs(expected))


def test_graph_too_large_for_the_host_fails_naming_the_tensor() -> None:
    graph = Graph(IPUModel("ipu2").create_device().target)
    graph.add_variable(FLOAT, [1000], "small")
    with pytest.raises(HostMemoryError, match=r"tensor 'huge' of shape \[400000, 400000\] needs"):
        graph.add_variable(FLOAT, [400_000, 400_000], "huge")
    assert [v.name for v in graph.variables] == ["small"]  # nothing half-added


def test_bert_layer_example_equals_numpy_and_its_report_counts_the_parameters(
    tmp_path: Path,
) -> None:
    args = ("--seq", "48", "--hidden", "64", "--heads", "4", "--ffn", "128")
    result = run_example_with_reports("bert_encoder_layer.py", tmp_path, *args)
    error = float(re.search(r"max relative error vs numpy (\S+)", result.stdout).group(1))
    assert error <= 1e-4
    with ProfileReader(tmp_path / "bert_layer" / "profile.pop") as r:
        names = [r.graph.strings[int(i)] for i in r.graph.var_name]
        by_name = dict(zip(names, r.graph.var_bytes.tolist(), strict=True))
    # hand count: x [48,64], four [64,64] projections, [64,128] and [128,64], 4 x [64]
    hand = 4 * (48 * 64 + 4 * 64 * 64 + 2 * 64 * 128 + 4 * 64)
    assert (
        sum(by_name[n] for n in ("x", "wq", "wk", "wv", "wo", "w1", "w2"))
        + sum(by_name[n] for n in ("gamma1", "beta1", "gamma2", "beta2"))
        == hand
    )


def test_search_many_equals_searchsorted_for_needles_in_any_order() -> None:
    """Large haystacks and many needles in random order, repeats and 2-D shape: the
    indices ``np.searchsorted`` gives, on both sides."""
    rng = np.random.default_rng(9)
    haystack = np.cumsum(rng.integers(0, 4, 100_000))  # repeats: equal starts side by side
    needles = rng.integers(-5, int(haystack[-1]) + 5, (50, 200))
    for side in ("left", "right"):
        expected = np.searchsorted(haystack, needles, side=side)
        np.testing.assert_array_equal(search_many(haystack, needles, side), expected)
        flat = needles.reshape(-1)
        np.testing.assert_array_equal(
            search_many(haystack, np.sort(flat), side), np.sort(expected.reshape(-1))
        )
