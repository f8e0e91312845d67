"""The wrong-type sweep's values: the wrong-typed ones tried in each argument in turn, and
the well-formed ones every other argument gets (found by parameter name, with overrides per
function), on a small context rebuilt for every call (test_wrong_types.py)."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import ipu_engine.poplar.program as program_module
import ipu_engine.pvti as pvti
from ipu_engine import (
    BOOL,
    FLOAT,
    INT,
    Engine,
    Graph,
    IPUModel,
    Output,
    Sequence,
    State,
    Vertex,
)
from ipu_engine.frontend import nn
from ipu_engine.poplin.conv import ConvShape
from ipu_engine.popops import expr

#: Wrong-typed values, one at a time in each argument.
WRONG = {
    "None": None,
    "a str": "x",
    "a float": 1.5,
    "a list": [1, 2],
    "a dict": {"k": 1},
    "an object()": object(),
    "a negative int": -1,
    "a huge int": 2**70,  # beyond int64: numpy's C conversions overflow
    "NaN": float("nan"),
    "a 2-D array": np.zeros((2, 2)),  # its truth value is ambiguous: no `x or default`
}
DEVICE = IPUModel("ipu2", tiles_per_ipu=4).create_device()


class Zero(Vertex):
    out = Output(FLOAT)

    def compute(self):
        self.out[:] = 0


class Scaled(Vertex):
    out = Output(FLOAT)
    scale = State(FLOAT)

    def compute(self):
        self.out[:] = self.scale


class Traced:
    def run(self) -> int:
        return 1


@dataclass
class Context:
    """A small graph (FLOAT[4] tensors a and b, INT[4] labels, a [2, 3] and a [3, 2] matrix
    and two groups of them, an NHWC input with a plain and a two-group kernel and a bias,
    a BOOL predicate), a compute set with two vertices, a
    program and, on demand, a loaded engine: rebuilt for every call, so no call sees
    another's damage."""

    graph: Graph
    t: dict[str, Any]
    cs: Any
    vertex: Any  # Zero, its output connected
    free: Any  # Scaled, nothing connected
    prog: Sequence
    channel: Any
    engine: Engine | None = None

    def value(self, name: str, function: str) -> Any:
        """The well-formed value of parameter ``name`` of ``function``."""
        special = OVERRIDES.get((function, name))
        if special is not None:
            return special(self)
        make = BY_NAME.get(name)
        return make(self) if make is not None else None


def _tensor(key: str) -> Callable[[Context], Any]:
    return lambda c: c.t[key]


BY_NAME: dict[str, Callable[[Context], Any]] = {
    "graph": lambda c: c.graph,
    "target": lambda c: DEVICE.target,
    **{n: _tensor("a") for n in ("a", "t", "tensor", "x", "src", "source", "out", "first")},
    **{n: _tensor("b") for n in ("b", "out_grad", "dst", "destination", "second")},
    "probs": _tensor("probs"),
    "labels": _tensor("labels"),
    "inp": _tensor("image"),
    "weights": _tensor("kernel"),
    "predicate": _tensor("predicate"),
    "indices": _tensor("labels"),
    "axis": lambda c: 0,
    "kernel": lambda c: 2,
    "size": lambda c: 3,
    "groups": lambda c: 2,
    "dilation": lambda c: 2,
    "tensors": lambda c: [c.t["a"], c.t["b"]],
    "prog": lambda c: c.prog,
    "body": lambda c: Sequence(),
    "then": lambda c: Sequence(),
    "else_": lambda c: Sequence(),
    "cond": lambda c: Sequence(),
    "program": lambda c: Sequence(),
    "programs": lambda c: Sequence(),
    "compute_set": lambda c: c.cs,
    "vertex": lambda c: c.vertex,
    "codelet": lambda c: Zero,
    "connections": lambda c: {"out": c.graph.add_variable(FLOAT, [1], "extra")},
    "field": lambda c: c.free["out"],
    "dtype": lambda c: FLOAT,
    "elem_type": lambda c: FLOAT,
    "label_type": lambda c: INT,
    "shape": lambda c: [4],
    "values": lambda c: np.zeros(4, np.float32),
    "value": lambda c: 0.0,
    "data": lambda c: np.zeros(4, np.float32),
    "tile": lambda c: 0,
    "tiles": lambda c: np.zeros(1, np.int32),
    "handle": lambda c: "a",
    "name": lambda c: "n",
    "debug_prefix": lambda c: "n",
    "label": lambda c: "n",
    "title": lambda c: "n",
    "unit": lambda c: "",
    "units": lambda c: "",
    "count": lambda c: 2,
    "num_elements": lambda c: 4,
    "cycles": lambda c: 10,
    "min_elements_per_tile": lambda c: 1,
    "grain_size": lambda c: 1,
    "dims": lambda c: [0],
    "op": lambda c: "add",
    "kind": lambda c: "relu",
    "scale": lambda c: 1.0,
    "expr": lambda c: expr._1 + expr._2,
    "index": lambda c: 0,
    "ipu": lambda c: 0,
    "depth": lambda c: 0,
    "channel": lambda c: c.channel,
    "device": lambda c: DEVICE,
    "edges": lambda c: [0.0, 1.0],
    "directory": lambda c: "traces",
    "options": lambda c: {},
    "stride": lambda c: 1,
    "padding": lambda c: 0,
    "label_names": lambda c: ["s"],
    "label_index": lambda c: np.zeros(1, np.int64),
    "start_ns": lambda c: np.zeros(1, np.int64),
    "end_ns": lambda c: np.ones(1, np.int64),
    "m": lambda c: 4,
    "k": lambda c: 4,
    "n": lambda c: 4,
    "elem_size": lambda c: 4,
    "dtype_name": lambda c: "float",
    "num_tiles": lambda c: 4,
    "bytes_per_tile": lambda c: 638_976,
    "obj": lambda c: Traced,
    "methods": lambda c: ["run"],
    "callback": lambda c: lambda buffer: None,
    "stream": lambda c: None,
    "out_": lambda c: None,
    # Tensor methods, on the [2, 3] matrix
    "key": lambda c: 0,
    "begin": lambda c: 0,
    "end": lambda c: 1,
    "dim": lambda c: 0,
    "new_dim": lambda c: 1,
    "i": lambda c: 1,
    "times": lambda c: 2,
    "permutation": lambda c: [1, 0],
    "other": _tensor("m23"),
    # front-end layers and metrics
    "in_features": lambda c: 3,
    "out_features": lambda c: 2,
    "layer": lambda c: nn.ReLU(),
    # targets and devices
    "version": lambda c: "ipu2",
    "num_ipus": lambda c: 1,
    "tiles_per_ipu": lambda c: 4,
    "profile": lambda c: "ipu_model",
    "ipu_id": lambda c: 0,
}
OVERRIDES: dict[tuple[str, str], Callable[[Context], Any]] = {
    ("mat_mul", "a"): _tensor("m23"),
    ("mat_mul", "b"): _tensor("m32"),
    ("mat_mul_plan", "a"): _tensor("m23"),
    ("mat_mul_plan", "b"): _tensor("m32"),
    ("create_mat_mul_input_rhs", "a_shape"): lambda c: [2, 3],
    ("create_mat_mul_input_rhs", "b_shape"): lambda c: [3, 2],
    ("mat_mul_grouped", "a"): _tensor("g223"),
    ("mat_mul_grouped", "b"): _tensor("g232"),
    ("convolution", "weights"): _tensor("group_kernel"),
    ("convolution", "bias"): _tensor("conv_bias"),
    ("convolution", "padding"): lambda c: 2,  # "same" for the dilated 3x3 kernel
    ("gather", "data"): _tensor("a"),
    ("scatter_nd", "data"): _tensor("a"),
    ("scatter_nd", "indices"): _tensor("index_tuples"),
    ("scatter_nd", "updates"): _tensor("two"),
    ("scatter_elements", "data"): _tensor("a"),
    ("scatter_elements", "updates"): _tensor("b"),
    ("resample", "rows"): lambda c: [[0, 1], [2, 3]],
    ("resample", "weights"): lambda c: [[0.5, 0.5], [0.25, 0.75]],
    ("conv_transpose", "weights"): _tensor("group_kernel"),
    ("conv_transpose", "bias"): _tensor("conv_bias"),
    **{(layer, "x"): _tensor("sequence") for layer in ("lstm", "gru")},
    ("lstm", "weights_in"): _tensor("lstm_in"),
    ("lstm", "weights_rec"): _tensor("lstm_rec"),
    ("gru", "weights_in"): _tensor("gru_in"),
    ("gru", "weights_rec"): _tensor("gru_rec"),
    ("select", "cond"): _tensor("predicate"),
    **{(op, "t"): _tensor("image") for op in ("max_pool", "avg_pool", "global_avg_pool", "lrn")},
    ("calc_loss", "labels"): _tensor("batch_labels"),
    ("cross_entropy", "labels"): _tensor("batch_labels"),
    ("add_vertex_block", "edges"): lambda c: {"out": (c.t["a"].addr[:1], np.array([0, 1]))},
    ("add_vertex_block", "codelet"): lambda c: Zero,
    ("map_runs", "runs"): lambda c: [c.t["a"].addr],
    ("map_runs", "tiles"): lambda c: [1],
    ("set_tile_mapping", "target"): _tensor("a"),
    ("set_initial_value", "field"): lambda c: c.free["scale"],
    ("set_tile_mapping_array", "tiles"): lambda c: np.zeros(4, np.int32),
    ("Engine", "graph"): lambda c: engine_graph()[0],
    ("Call", "function"): lambda c: c.graph.add_function(Sequence()),
    ("connect_stream", "name"): lambda c: "in",
    ("connect_stream", "data"): lambda c: np.zeros(8, np.float32),
    ("connect_stream_to_callback", "name"): lambda c: "in",
    ("read_tensor", "handle"): lambda c: "b",
    ("read_tensor", "out"): lambda c: None,
    ("print_profile_summary", "out"): lambda c: io.StringIO(),
    ("set_print_stream", "stream"): lambda c: io.StringIO(),
    ("plan_convolution", "shape"): lambda c: ConvShape(1, 4, 4, 2, 2, 3, 3, 1, 1),
    ("ipu_track_span", "start_ns"): lambda c: 0,
    ("ipu_track_span", "end_ns"): lambda c: 1,
    ("Series", "graph"): lambda c: pvti.Graph("g"),
    ("PrintTensor", "tensor"): _tensor("a"),
    ("linear_tile_array", "tiles"): lambda c: range(4),
    ("reshape", "shape"): lambda c: [3, 2],
    ("squeeze", "dims"): lambda c: [],
    ("Linear", "dtype"): lambda c: np.float32,
    ("to", "dtype"): lambda c: np.float16,
    ("load_parameters", "values"): lambda c: {"fc.weight": np.ones((3, 2))},
}


def make_context() -> Context:
    graph = Graph(DEVICE.target)
    shapes = {
        "a": (FLOAT, [4]), "b": (FLOAT, [4]), "labels": (INT, [4]), "m23": (FLOAT, [2, 3]),
        "m32": (FLOAT, [3, 2]), "probs": (FLOAT, [4, 3]), "batch_labels": (INT, [4]),
        "image": (FLOAT, [1, 4, 4, 2]), "kernel": (FLOAT, [3, 3, 2, 2]), "predicate": (BOOL, []),
        "g223": (FLOAT, [2, 2, 3]), "g232": (FLOAT, [2, 3, 2]),
        "group_kernel": (FLOAT, [3, 3, 1, 2]), "conv_bias": (FLOAT, [2]),
        "index_tuples": (INT, [2, 1]), "two": (FLOAT, [2]), "sequence": (FLOAT, [2, 1, 3]),
        "lstm_in": (FLOAT, [1, 3, 8]), "lstm_rec": (FLOAT, [1, 2, 8]),
        "gru_in": (FLOAT, [1, 3, 6]), "gru_rec": (FLOAT, [1, 2, 6]),
    }  # fmt: skip
    tensors = {}
    for key, (dtype, shape) in shapes.items():
        tensors[key] = graph.add_variable(dtype, shape, key)
        graph.set_tile_mapping(tensors[key], 0)
    graph.add_codelets(Zero, Scaled)
    cs = graph.add_compute_set("cs")
    vertex = graph.add_vertex(cs, Zero, {"out": tensors["a"]})
    graph.set_tile_mapping(vertex, 0)
    free = graph.add_vertex(cs, Scaled)
    graph.set_tile_mapping(free, 0)
    return Context(graph, tensors, cs, vertex, free, Sequence(), pvti.TraceChannel("sweep"))


def engine_graph() -> tuple[Graph, Sequence]:
    """A graph an engine compiles: host write "a", host read "b", a stream "in" into b."""
    graph = Graph(DEVICE.target)
    a, b = graph.add_variable(FLOAT, [4], "a"), graph.add_variable(FLOAT, [4], "b")
    for t in (a, b):
        graph.set_tile_mapping(t, 0)
    graph.create_host_write("a", a)
    graph.create_host_read("b", b)
    stream = graph.add_host_to_device_fifo("in", FLOAT, 4)
    return graph, Sequence(program_module.Copy(stream, b))


def loaded_engine() -> Engine:
    engine = Engine(*engine_graph())
    engine.load(DEVICE)
    engine.connect_stream("in", np.zeros(4, np.float32))
    return engine
