"""User codelets: fields of every kind, per-vertex and batched compute."""

import numpy as np

from ipu_engine import (
    FLOAT,
    INT,
    Execute,
    Graph,
    InOut,
    Input,
    Output,
    Sequence,
    State,
    Vector,
    Vertex,
)
from tests.ipu_engine.conftest import run_program


class Scale(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT)
    factor = State(FLOAT, 1.0)

    def compute(self):
        self.out[:] = self.in_ * self.factor


class SumRows(Vertex):
    """Vector<Input<Vector<float>>>: one sum per connected edge."""

    rows = Vector(Input(FLOAT))
    sums = Output(FLOAT)

    def compute(self):
        self.sums = [row.sum() for row in self.rows]


class Accumulate(Vertex):
    """A templated InOut: works on whatever element type it is connected to."""

    acc = InOut()
    delta = Input()

    def compute(self):
        self.acc += self.delta


class BatchedSquare(Vertex):
    """A user codelet that runs every vertex in one numpy call."""

    in_ = Input(FLOAT)
    out = Output(FLOAT)
    calls = 0

    @classmethod
    def compute_batch(cls, batch):
        cls.calls += 1
        np.square(batch["in"], out=batch["out"])


def test_vertex_state_fields_and_vector_outputs(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [2, 3], "x")
    y = graph.add_variable(FLOAT, [2, 3], "y")
    for i in range(2):
        graph.set_tile_mapping(x[i], i)
        graph.set_tile_mapping(y[i], i)
    graph.create_host_write("x", x)
    graph.create_host_read("y", y)
    cs = graph.add_compute_set("scale")
    for i, factor in enumerate((2.0, -0.5)):
        v = graph.add_vertex(cs, Scale, {"in": x[i], "out": y[i]}, factor=factor)
        graph.set_tile_mapping(v, i)
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    _, out = run_program(graph, device4, Execute(cs), {"x": xs}, ["y"])
    assert np.array_equal(out["y"], xs * np.array([[2.0], [-0.5]], dtype=np.float32))


def test_vector_of_edges_connected_as_a_list_or_one_edge_at_a_time(device4):
    graph = Graph(device4.target)
    m = graph.add_variable(FLOAT, [3, 4], "m")
    sums = graph.add_variable(FLOAT, [3], "sums")
    graph.set_tile_mapping(m, 0)
    graph.set_tile_mapping(sums, 0)
    graph.create_host_write("m", m)
    graph.create_host_read("sums", sums)
    cs = graph.add_compute_set("sum")
    v = graph.add_vertex(cs, SumRows, rows=[m[0], m[1]])
    graph.connect(v["rows"][2], m[2])
    graph.connect(v["sums"], sums)
    graph.set_tile_mapping(v, 0)
    ms = np.arange(12, dtype=np.float32).reshape(3, 4)
    _, out = run_program(graph, device4, Execute(cs), {"m": ms}, ["sums"])
    assert out["sums"].tolist() == ms.sum(axis=1).tolist()


def test_templated_fields_take_the_type_they_are_connected_to(device4):
    graph = Graph(device4.target)
    fi = graph.add_variable(FLOAT, [3], "f")
    ii = graph.add_variable(INT, [3], "i")
    df = graph.add_constant(FLOAT, [3], [0.5, 1.5, 2.5], "df")
    di = graph.add_constant(INT, [3], [1, 2, 3], "di")
    for t in (fi, ii, df, di):
        graph.set_tile_mapping(t, 0)
    graph.create_host_read("f", fi)
    graph.create_host_read("i", ii)
    cs = graph.add_compute_set("acc")
    for acc, delta in ((fi, df), (ii, di)):
        graph.set_tile_mapping(graph.add_vertex(cs, Accumulate, acc=acc, delta=delta), 0)
    _, out = run_program(graph, device4, Sequence(Execute(cs), Execute(cs)), reads=["f", "i"])
    assert out["f"].tolist() == [1.0, 3.0, 5.0]
    assert out["i"].tolist() == [2, 4, 6]
    assert out["i"].dtype == np.int32


def test_user_codelet_with_compute_batch_runs_once_per_compute_set(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [8], "x")
    y = graph.add_variable(FLOAT, [8], "y")
    graph.add_codelets(BatchedSquare)
    cs = graph.add_compute_set("square")
    for tile in range(4):
        part = slice(2 * tile, 2 * tile + 2)
        graph.set_tile_mapping(x[part], tile)
        graph.set_tile_mapping(y[part], tile)
        v = graph.add_vertex(cs, "BatchedSquare", {"in": x[part], "out": y[part]})
        graph.set_tile_mapping(v, tile)
    graph.create_host_write("x", x)
    graph.create_host_read("y", y)
    BatchedSquare.calls = 0
    xs = np.linspace(-2, 2, 8, dtype=np.float32)
    _, out = run_program(graph, device4, Execute(cs), {"x": xs}, ["y"])
    assert BatchedSquare.calls == 1
    assert np.array_equal(out["y"], xs * xs)


def test_codelets_load_from_a_python_file_like_add_codelets(device4, tmp_path):
    source = tmp_path / "my_codelets.py"
    source.write_text(
        "from ipu_engine import Vertex, Input, Output, FLOAT\n"
        "class Negate(Vertex):\n"
        "    in_ = Input(FLOAT)\n"
        "    out = Output(FLOAT)\n"
        "    def compute(self):\n"
        "        self.out[:] = -self.in_\n"
    )
    graph = Graph(device4.target)
    graph.add_codelets(source)
    x = graph.add_constant(FLOAT, [2], [1, -3], "x")
    y = graph.add_variable(FLOAT, [2], "y")
    graph.set_tile_mapping(x, 0)
    graph.set_tile_mapping(y, 0)
    cs = graph.add_compute_set("neg")
    graph.set_tile_mapping(graph.add_vertex(cs, "Negate", {"in": x, "out": y}), 0)
    graph.create_host_read("y", y)
    _, out = run_program(graph, device4, Execute(cs), reads=["y"])
    assert out["y"].tolist() == [-1, 3]


def test_vertex_describe_names_fields_as_poplar_declares_them():
    assert (
        Scale.describe()
        == "Scale(Input<Vector<float>> in; Output<Vector<float>> out; float factor)"
    )
    assert (
        SumRows.describe()
        == "SumRows(Vector<Input<Vector<float>>> rows; Output<Vector<float>> sums)"
    )
