"""Tensor views alias the variable they come from, whatever the view."""

import numpy as np
import pytest

from ipu_engine import FLOAT, INT, Copy, Graph, Sequence, ShapeError, TypeMismatchError, concat
from tests.ipu_engine.conftest import run_program


def _graph_with(device, shape, dtype=FLOAT):
    graph = Graph(device.target)
    t = graph.add_variable(dtype, shape, "t")
    graph.set_tile_mapping(t, 0)
    graph.create_host_write("t", t)
    graph.create_host_read("t", t)
    return graph, t


def _copy_into(device, graph, view, values):
    """Write ``values`` into ``view`` through a constant copy; return the whole base."""
    c = graph.add_constant(view.type, view.shape, values, "c")
    graph.set_tile_mapping(c, 1)
    base = np.zeros(graph.variables[0].shape, dtype=view.type.numpy_dtype)
    _, out = run_program(graph, device, Sequence(Copy(c, view)), {"t": base}, ["t"])
    return out["t"]


@pytest.mark.parametrize(
    ("make_view", "numpy_view"),
    [
        (lambda t: t[1], lambda a: a[1]),
        (lambda t: t[1][2], lambda a: a[1, 2]),
        (lambda t: t.slice(1, 3), lambda a: a[1:3]),
        (lambda t: t.slice(1, 4, dim=1), lambda a: a[:, 1:4]),
        (lambda t: t.slice([1, 1], [3, 4]), lambda a: a[1:3, 1:4]),
        (lambda t: t.transpose(), lambda a: a.T),
        (lambda t: t.reshape([4, 3]), lambda a: a.reshape(4, 3)),
        (lambda t: t.flatten(), lambda a: a.reshape(-1)),
        (lambda t: t.transpose().flatten(), lambda a: a.T.reshape(-1)),
        (lambda t: t.reverse(1), lambda a: a[:, ::-1]),
        (lambda t: t.subsample(2, 1), lambda a: a[:, ::2]),
        (lambda t: t.dim_shuffle([1, 0]).slice(0, 2), lambda a: a.T[0:2]),
    ],
)
def test_writing_through_a_view_changes_the_elements_numpy_says(device4, make_view, numpy_view):
    graph, t = _graph_with(device4, [3, 4])
    view = make_view(t)
    values = np.arange(1, view.num_elements + 1, dtype=np.float32).reshape(view.shape)
    # numpy says which elements the view covers: apply the view to element indices
    covered = np.asarray(numpy_view(np.arange(12).reshape(3, 4))).reshape(-1)
    expected = np.zeros(12, dtype=np.float32)
    expected[covered] = values.reshape(-1)
    assert np.array_equal(_copy_into(device4, graph, view, values), expected.reshape(3, 4))


def test_dim_shuffle_of_a_3d_tensor_matches_numpy_transpose(device4):
    graph, t = _graph_with(device4, [2, 3, 4])
    view = t.dim_shuffle([2, 0, 1])
    assert view.shape == (4, 2, 3)
    values = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    expected = np.zeros((2, 3, 4), dtype=np.float32)
    expected.transpose(2, 0, 1)[...] = values
    assert np.array_equal(_copy_into(device4, graph, view, values), expected)


def test_concat_aliases_every_part(device4):
    graph = Graph(device4.target)
    a = graph.add_variable(INT, [2, 2], "a")
    b = graph.add_variable(INT, [2, 3], "b")
    graph.set_tile_mapping(a, 0)
    graph.set_tile_mapping(b, 1)
    both = concat([a, b], dim=1)
    assert both.shape == (2, 5)
    c = graph.add_constant(INT, [2, 5], np.arange(10).reshape(2, 5), "c")
    graph.set_tile_mapping(c, 2)
    graph.create_host_read("a", a)
    graph.create_host_read("b", b)
    _, out = run_program(graph, device4, Sequence(Copy(c, both)), reads=["a", "b"])
    assert out["a"].tolist() == [[0, 1], [5, 6]]
    assert out["b"].tolist() == [[2, 3, 4], [7, 8, 9]]


def test_bad_views_name_the_tensor(device4):
    graph, t = _graph_with(device4, [3, 4])
    with pytest.raises(ShapeError, match=r"'t'.*\(3, 4\).*\(5, 5\)"):
        t.reshape([5, 5])
    with pytest.raises(ShapeError, match="slice \\[2, 9\\) of dimension 1 of tensor 't'"):
        t.slice(2, 9, dim=1)
    with pytest.raises(ShapeError, match="transpose needs a 2-D tensor but 't.flatten\\(\\)'"):
        t.flatten().transpose()
    with pytest.raises(ShapeError, match="not a permutation"):
        t.dim_shuffle([0, 0])
    other = graph.add_variable(INT, [3, 4], "ints")
    with pytest.raises(TypeMismatchError, match="'ints' is INT but 't' is FLOAT"):
        concat([t, other])
    with pytest.raises(ShapeError, match="concat along dimension 0"):
        concat([t, graph.add_variable(FLOAT, [3, 5], "wide")])


def test_strided_views_keep_no_addresses_until_asked_and_equal_numpy() -> None:
    """Views numpy could take of the variable stay affine maps (issue 18); their
    addresses, made on demand, equal numpy's views of an address array."""
    from ipu_engine import IPUModel

    graph = Graph(IPUModel("ipu2", tiles_per_ipu=4).create_device().target)
    graph.add_variable(FLOAT, [7], "before")
    t = graph.add_variable(FLOAT, [4, 5, 6], "t")
    ref = np.arange(7, 7 + 120).reshape(4, 5, 6)
    views = {
        "slice": (t.slice(1, 3, 1), ref[:, 1:3]),
        "index": (t[2, 1:4], ref[2, 1:4]),
        "scalar": (t[1, 2, 3], ref[1, 2, 3]),
        "dim_shuffle": (t.dim_shuffle([2, 0, 1]), ref.transpose(2, 0, 1)),
        "reverse": (t.reverse(2).subsample(2, 0), ref[::2, :, ::-1]),
        "reshape": (t.reshape([20, 6]).transpose(), ref.reshape(20, 6).T),
        "flatten": (t.slice(1, 2, 0).flatten(), ref[1:2].reshape(-1)),
        "expand_squeeze": (t.expand([0]).squeeze([0]).dim_roll(2, 0), np.moveaxis(ref, 2, 0)),
    }
    for name, (view, expected) in views.items():
        assert view.affine is not None, name
        assert view._addr is None, name  # nothing made yet
        assert view.shape == expected.shape, name
        assert np.array_equal(view.addr, expected), name
    # a copy-needing reshape and advanced indexing fall back to addresses
    odd = t.dim_shuffle([1, 0, 2]).reshape([120])
    assert np.array_equal(odd.addr, ref.transpose(1, 0, 2).reshape(-1))
    picked = t[[0, 3], 1]
    assert picked.affine is None and np.array_equal(picked.addr, ref[[0, 3], 1])
    assert t.slice(0, 2, 0).pool_range() == (7, 7 + 60)
    assert t.slice(0, 2, 1).pool_range() is None


def test_a_transposed_view_is_read_and_written_as_a_strided_view_of_memory(device4) -> None:
    """Host handles on an NHWC tensor seen as NCHW (a 3-step pattern of addresses) read
    and write through a strided view of memory, not per-element addresses: the same
    elements as numpy's transpose, both ways."""
    graph = Graph(device4.target)
    t = graph.add_variable(FLOAT, [2, 3, 4, 5], "t")  # N, H, W, C
    graph.set_tile_mapping(t, 0)
    nchw = t.dim_shuffle([0, 3, 1, 2])
    graph.create_host_write("nchw", nchw)
    graph.create_host_read("t", t)
    graph.create_host_read("nchw", nchw)
    values = np.arange(120, dtype=np.float32).reshape(2, 5, 3, 4)
    engine, out = run_program(graph, device4, Sequence(), {"nchw": values}, ["t", "nchw"])
    np.testing.assert_array_equal(out["t"], values.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(out["nchw"], values)
    _, access = engine._handle("write", "nchw")
    assert access.pattern is not None and access.pattern[1] == (2, 5, 12)
