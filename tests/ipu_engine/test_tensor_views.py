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
