"""Library misuses found by probing beyond the issue's list (issue 30, point 4): values that
were silently bent into other values (a float dimension truncated, a negative grain taken
as 1, a 0.5 scale of an INT reduction truncating the result) or escaped as raw Python
errors. Each is an EngineError naming the call and the argument, and nothing changes."""

from __future__ import annotations

import numpy as np
import pytest

import ipu_engine.pvti as pvti
from ipu_engine import (
    FLOAT,
    INT,
    Engine,
    Graph,
    GraphError,
    HostMemoryError,
    Input,
    IPUModel,
    ProgramError,
    Sequence,
    ShapeError,
    ShardError,
    Sync,
    TileMappingError,
    Vertex,
    VertexConnectionError,
    popops,
    poputil,
)
from ipu_engine.common.errors import ArgumentError
from ipu_engine.frontend import nn
from ipu_engine.poplar.virtual_graph import create_virtual_graph, on_ipu
from ipu_engine.popops import expr
from ipu_engine.pvti.errors import MetricError, PvtiOptionsError
from ipu_engine.pvti.options import parse_options


@pytest.fixture
def device():
    return IPUModel("ipu2", tiles_per_ipu=4).create_device()


@pytest.fixture
def graph(device):
    return Graph(device.target)


def mapped(graph: Graph, dtype, shape, name: str):
    t = graph.add_variable(dtype, shape, name)
    graph.set_tile_mapping(t, 0)
    return t


def run_int(graph: Graph, device, prog: Sequence, inputs: dict, output: str) -> list:
    engine = Engine(graph, prog)
    engine.load(device)
    for handle, values in inputs.items():
        engine.write_tensor(handle, values)
    engine.run(0)
    return engine.read_tensor(output).tolist()


# -- tensor views: float dimensions and strides were truncated ---------------------------------


@pytest.mark.parametrize(
    ("view", "said"),
    [
        (lambda t: t.dim_shuffle([0.9, 1]), "dim_shuffle of tensor 't': item 0 must be an integer"),
        (lambda t: t.expand([0.5]), "expand of tensor 't': item 0 must be an integer, got 0.5"),
        (lambda t: t.subsample(1.5, 0), "subsample of tensor 't': stride must be an integer"),
        (lambda t: t.flatten(0.5, 2), "flatten of tensor 't': begin must be an integer"),
        (lambda t: t.dim_roll(0.5), "dim_roll of tensor 't': the dimension must be an integer"),
        (lambda t: t.reverse(1.5), "reverse of tensor 't': the dimension must be an integer"),
        (lambda t: t.broadcast(2, 1.5), "broadcast of tensor 't': the dimension must be an"),
        (lambda t: t.dim("a"), "dim of tensor 't' must be an integer, got 'a'"),
        (lambda t: t.squeeze([5]), "squeeze: dimension 5 is outside tensor 't' (2, 3)"),
        (lambda t: t[::0], "tensor 't' of shape (2, 3): slice step cannot be zero"),
        (lambda t: t[True], "an index must be an integer or a slice, got True"),
    ],
)
def test_tensor_views_refuse_what_they_would_truncate_or_fail_on(graph, view, said):
    t = mapped(graph, FLOAT, [2, 3], "t")
    with pytest.raises(ShapeError) as e:
        view(t)
    assert said in str(e.value)
    # the views the values stood for: taken from numpy's own views of a [2, 3] array
    values = np.arange(6).reshape(2, 3)
    assert t.dim_shuffle([1, 0]).shape == values.transpose(1, 0).shape
    assert t.subsample(2, 1).shape == values[:, ::2].shape
    assert t.expand([0]).shape == values[None].shape


def test_concat_of_something_not_a_tensor_names_the_part(graph):
    t = mapped(graph, FLOAT, [2], "t")
    with pytest.raises(GraphError, match=r"concat: part 1 must be a Tensor, got 3 \(int\)"):
        t.concat(3)
    assert t.concat(t).shape == (4,)


# -- virtual graphs ----------------------------------------------------------------------------


def test_a_virtual_graph_on_ipu_0_5_is_refused_not_ipu_0(graph):
    with (
        pytest.raises(ShardError, match=r"IPU: the IPU must be an integer, got 0.5"),
        on_ipu(graph, 0.5),
    ):
        pass  # fmt: skip
    with (
        pytest.raises(ShardError, match=r"the IPU must be an integer, got '0'"),
        on_ipu(graph, "0"),
    ):
        pass  # fmt: skip
    with (
        pytest.raises(TileMappingError, match=r"createVirtualGraph: the lower tile must be an"),
        create_virtual_graph(graph, 0.5, 2.9),
    ):
        pass
    with (
        pytest.raises(TileMappingError, match=r"createVirtualGraph: the lower tile .* got 'a'"),
        create_virtual_graph(graph, "a", 2),
    ):
        pass
    assert graph.tile_range == range(4)  # no scope left pushed
    with create_virtual_graph(graph, 1, 3) as tiles:
        assert graph.tile_range == tiles == range(1, 3)


# -- vertex fields -----------------------------------------------------------------------------


def test_a_vertex_field_named_with_a_bad_edge_number_is_a_connection_error(graph):
    class Reads(Vertex):
        x = Input(FLOAT)

        def compute(self) -> None:
            pass

    graph.add_codelets(Reads)
    cs = graph.add_compute_set("cs")
    vertex = graph.add_vertex(cs, Reads)
    t = mapped(graph, FLOAT, [2], "t")
    for name, said in (
        ("x[a]", "field 'x[a]': an edge of a vector field is numbered 0, 1, ..., got 'a'"),
        ("x[1.5]", "got '1.5'"),
        ("x[-1]", "got '-1'"),
        (3, "a field name must be a string, got 3 (int)"),
    ):
        with pytest.raises(VertexConnectionError) as e:
            graph.connect(vertex[name], t)
        assert said in str(e.value)
    graph.connect(vertex["x"], t)


# -- popops ------------------------------------------------------------------------------------


def test_an_int_reduction_scaled_by_0_5_is_refused_not_truncated(device, graph):
    k = mapped(graph, INT, [4], "k")
    prog = Sequence()
    with pytest.raises(GraphError, match=r"popops::reduce: the scale of a INT reduction: 0.5"):
        popops.reduce(graph, k, [0], "add", prog, scale=0.5)  # 11 * 0.5 was stored as 5
    with pytest.raises(ShapeError, match=r"popops::reduce: dimensions \[0, 0\] name a dimension"):
        popops.reduce(graph, k, [0, 0], "add", prog)
    assert prog.programs == []
    total = popops.reduce(graph, k, [0], "add", prog, scale=2)  # a whole scale is exact
    graph.create_host_write("k", k)
    graph.create_host_read("total", total)
    assert run_int(graph, device, prog, {"k": [1, 2, 3, 5]}, "total") == 2 * 11


@pytest.mark.parametrize(
    ("constant", "said"),
    [
        (0.5, "the constant 0.5: 0.5 is not a whole number"),
        (float("nan"), "the constant nan: infinity or NaN cannot be stored in a INT tensor"),
        (2**40, "1099511627776 is outside the range of INT"),
    ],
)
def test_an_int_map_refuses_constants_an_int_cannot_hold(device, graph, constant, said):
    k = mapped(graph, INT, [4], "k")
    prog = Sequence()
    with pytest.raises(GraphError, match="popops::map") as e:
        popops.map(graph, expr._1 * constant, [k], prog)  # 0.5 was evaluated as 0
    assert said in str(e.value)
    assert prog.programs == []
    doubled = popops.map(graph, expr._1 * 2, [k], prog)
    graph.create_host_write("k", k)
    graph.create_host_read("doubled", doubled)
    assert run_int(graph, device, prog, {"k": [1, -2, 3, 4]}, "doubled") == [2, -4, 6, 8]


def test_scaled_add_checks_its_scale_before_the_graph_changes(graph):
    k = mapped(graph, INT, [4], "k")
    prog = Sequence()
    before = (len(graph.compute_sets), len(graph.vertex_blocks))
    with pytest.raises(GraphError, match=r"popops::scaledAddTo: the scale of 'k': 0.5 is not"):
        popops.scaled_add_to(graph, k, k, 0.5, prog)
    with pytest.raises(GraphError, match=r"popops::scaledAddTo: the scale must be a number"):
        popops.scaled_add_to(graph, k, k, "2", prog)
    assert (len(graph.compute_sets), len(graph.vertex_blocks)) == before


# -- poputil -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"grain_size": -3}, "grain_size must be between 0 and 4294967295, got -3"),
        ({"grain_size": 0}, "grain_size must be at least 1, got 0"),
        ({"min_elements_per_tile": -3}, "min_elements_per_tile must be between 0 and"),
        ({"grain_size": 2**70}, "grain_size must be between 0 and 4294967295"),
    ],
)
def test_map_tensor_linearly_refuses_grains_it_took_as_1(graph, kwargs, said):
    t = graph.add_variable(FLOAT, [8], "t")
    with pytest.raises(GraphError, match=r"poputil::mapTensorLinearly: ") as e:
        poputil.map_tensor_linearly(graph, t, **kwargs)
    assert said in str(e.value)
    assert (graph.tile_array(t) == -1).all()
    poputil.map_tensor_linearly(graph, t, grain_size=2)  # 8 elements, 4 tiles: 2 each
    assert graph.tile_array(t).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


# -- pvti metrics and options --------------------------------------------------------------------


def test_heatmaps_refuse_nan_edges_and_values_they_would_bend(tmp_path, monkeypatch):
    monkeypatch.delenv("PVTI_OPTIONS", raising=False)
    with pytest.raises(MetricError, match=r"heatmap 'h': edges must be numbers, not NaN"):
        pvti.HeatmapDouble("h", [0.0, float("nan"), 2.0])
    ints = pvti.HeatmapInt64("n", [0, 2])
    with pytest.raises(MetricError, match=r"heatmap 'n': the values: 2.5 is not a whole number"):
        ints.bucket_counts([2.5])  # was counted as 2
    doubles = pvti.HeatmapDouble("d", [0.0, 1.0])
    pvti.enable(str(tmp_path))
    try:
        with pytest.raises(MetricError, match=r"heatmap 'd': the values: expected numbers"):
            doubles.add(["x"])
        doubles.add([0.5, 2.0, -1.0])
    finally:
        pvti.disable()
    # below 0, [0, 1), from 1 up: as numpy's searchsorted puts them
    assert doubles.bucket_counts([0.5, 2.0, -1.0, 1.0]).tolist() == [1, 1, 2]


@pytest.mark.parametrize("seconds", [float("inf"), 1e300, float("nan"), -1.0])
def test_a_pvti_duration_the_timer_cannot_wait_is_refused(tmp_path, monkeypatch, seconds):
    monkeypatch.delenv("PVTI_OPTIONS", raising=False)
    with pytest.raises(PvtiOptionsError, match=r"enable: duration_s must be 0 \(no limit\) to"):
        pvti.enable(str(tmp_path), duration_s=seconds)
    with pytest.raises(PvtiOptionsError, match=r'"duration" must be seconds >= 0'):
        parse_options(f'{{"enable": "true", "duration": "{seconds}"}}')


# -- front-end layers --------------------------------------------------------------------------


def test_nn_layers_refuse_what_they_bent_or_failed_on():
    with pytest.raises(ArgumentError, match=r"Linear: the seed must be an integer, got 'x'"):
        nn.Linear(2, 2, seed="x")
    with pytest.raises(ArgumentError, match=r"Linear: the name must be a string, got 3"):
        nn.Linear(2, 2, name=3)
    with pytest.raises(ArgumentError, match=r"Sequential: layer 1 must be a Layer, got 3"):
        nn.Sequential(nn.ReLU(), 3)
    with pytest.raises(ArgumentError, match=r"begin_block\(relu\): the IPU must be an integer"):
        nn.begin_block(nn.ReLU(), 1.5)  # was IPU 1
    with pytest.raises(HostMemoryError, match=r"tensor 'Linear.weight' of shape \[1000000, "):
        nn.Linear(10**6, 10**6)  # 4 TB of weights


def test_load_parameters_checks_every_value_before_changing_any():
    layer = nn.Linear(2, 2, name="fc", seed=0)
    weight, bias = layer.weight.copy(), layer.bias.copy()
    with pytest.raises(ShapeError, match=r"fc.load_parameters: 'fc.weight' has shape \[2, 2\]"):
        layer.load_parameters({"fc.bias": [9.0, 9.0], "fc.weight": np.zeros(3)})
    with pytest.raises(GraphError, match=r"'fc.bias': expected numbers, got an array of <U1"):
        layer.load_parameters({"fc.bias": ["a", "b"]})
    with pytest.raises(ArgumentError, match=r"fc.load_parameters: the values must be a dict"):
        layer.load_parameters([("fc.bias", [1.0, 2.0])])
    np.testing.assert_array_equal(layer.weight, weight)
    np.testing.assert_array_equal(layer.bias, bias)
    layer.load_parameters({"fc.bias": [1.0, 2.0]})
    assert layer.bias.tolist() == [1.0, 2.0]


# -- tile mappings and programs ----------------------------------------------------------------


def test_overlapping_tile_mapping_intervals_are_refused_not_last_one_wins(graph):
    t = graph.add_variable(FLOAT, [4], "t")
    with pytest.raises(TileMappingError, match=r"\[0, 3\) on tile 0 overlaps \[2, 4\) on tile 1"):
        graph.set_tile_mapping(t, [[(0, 3)], [(2, 4)]])  # element 2 was put on tile 1
    with pytest.raises(TileMappingError, match=r"\[1, 2\) on tile 0 overlaps \[1, 3\) on tile 0"):
        graph.set_tile_mapping(t[0:4], [[(1, 2), (1, 3)]])  # a view, intervals repeated
    assert (graph.tile_array(t) == -1).all()
    graph.set_tile_mapping(t, [[(0, 2), (3, 3)], [(2, 4)]])  # touching and empty ones are fine
    assert graph.tile_array(t).tolist() == [0, 0, 1, 1]


def test_a_sync_s_global_flag_is_true_or_false():
    with pytest.raises(ProgramError, match=r"Sync: global_ must be True or False, got 'x'"):
        Sync("x")  # a truthy string was a global sync
    assert Sync(True).global_ is True
