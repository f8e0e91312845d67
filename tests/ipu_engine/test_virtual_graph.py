"""Virtual graphs: library ops built inside ``on_ipu`` keep their tensors and vertices on
that IPU's tiles, and reading an operand from another IPU is inter-IPU exchange."""

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    Graph,
    IPUModel,
    Sequence,
    ShardError,
    TileMappingError,
    on_ipu,
    on_tiles,
    poplin,
    popops,
    poputil,
)
from ipu_engine.poplar.compiler.steps import StepKind
from ipu_engine.poplar.debug import caller_location, source_location
from tests.ipu_engine.conftest import run_program

TILES = 8  # per IPU


@pytest.fixture
def four_ipus():
    return IPUModel("ipu2", num_ipus=4, tiles_per_ipu=TILES).create_device()


def test_ops_inside_on_ipu_map_outputs_and_vertices_to_that_ipu(four_ipus):
    graph = Graph(four_ipus.target)
    a = graph.add_variable(FLOAT, [4, 6], "a")
    b = graph.add_variable(FLOAT, [6, 5], "b")
    with on_ipu(graph, 0):
        poputil.map_tensor_linearly(graph, a)
        poputil.map_tensor_linearly(graph, b)
    prog = Sequence()
    with on_ipu(graph, 2) as tiles:
        assert graph.tile_range == range(2 * TILES, 3 * TILES)
        total = popops.add(graph, a, a, prog, "twice")
        product = poplin.mat_mul(graph, total, b, prog, "product")
        summed = popops.reduce(graph, product, [1], "add", prog, "rows")
    assert graph.tile_range == range(4 * TILES)
    for t in (total, product, summed):
        assert set(graph.tile_array(t).tolist()) <= set(tiles)
    for block in graph.vertex_blocks:
        assert set((block.tiles // TILES).tolist()) == {2}
    for name, t in (("a", a), ("b", b)):
        graph.create_host_write(name, t)
    graph.create_host_read("summed", summed)
    av = np.arange(24, dtype=np.float32).reshape(4, 6)
    bv = np.ones((6, 5), dtype=np.float32)
    engine, out = run_program(graph, four_ipus, prog, {"a": av, "b": bv}, ["summed"])
    np.testing.assert_allclose(out["summed"], ((av + av) @ bv).sum(axis=1))
    kinds = {step.kind for step in engine.executable.steps}
    assert StepKind.GLOBAL_EXCHANGE in kinds  # a and b come over from IPU 0


def test_an_ipu_beyond_the_target_is_a_shard_error_naming_both_counts(four_ipus):
    graph = Graph(four_ipus.target)
    with pytest.raises(ShardError, match=r"IPU 4 is beyond .* 4 IPUs \(0\.\.3\)"), on_ipu(graph, 4):
        pass


def test_a_tile_range_outside_the_target_is_refused(four_ipus):
    graph = Graph(four_ipus.target)
    outside = range(3 * TILES, 5 * TILES)
    with pytest.raises(TileMappingError, match="outside the target"), on_tiles(graph, outside):
        pass
    with pytest.raises(TileMappingError, match="non-empty"), on_tiles(graph, range(3, 3)):
        pass


def test_source_location_overrides_the_recorded_caller():
    with source_location(("model.py", 12)):
        assert caller_location() == ("model.py", 12)
    assert caller_location()[0].endswith("test_virtual_graph.py")
