"""Building traced nodes into a graph with the library ops, on one replica's IPUs.

Each node becomes its popops / poplin / popnn op, built inside the node's name scopes,
attributed to its source line, and confined to its shard's IPU (a virtual graph over
that IPU's tiles). An operand held on another IPU is first copied over the IPU-Links
into a buffer laid out like it on the op's IPU (an "IpuCopy", as frameworks insert).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ipu_engine import poplin, popnn, popops
from ipu_engine.common.errors import EngineError, ShardError
from ipu_engine.frontend.available_memory import poplin_options
from ipu_engine.frontend.contexts import IPU_COPY, framework_op
from ipu_engine.frontend.ir import SOURCE_OPS, Node, shard_limit_text
from ipu_engine.frontend.weight_layout import matmul_options
from ipu_engine.poplar.debug import FrameworkScope, name_scope, source_location
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Copy, Sequence
from ipu_engine.poplar.tensor import Tensor, concat
from ipu_engine.poplar.virtual_graph import ipu_tiles, on_ipu
from ipu_engine.popops import expr
from ipu_engine.poputil import linear_tile_array
from ipu_engine.poputil.library_op import broadcast_to

BINARY = {
    "add": "ADD",
    "sub": "SUBTRACT",
    "mul": "MULTIPLY",
    "div": "DIVIDE",
    "maximum": "MAXIMUM",
    "minimum": "MINIMUM",
    "pow": "POWER",
}
UNARY = {
    "neg": "NEGATE",
    "exp": "EXPONENT",
    "log": "LOGARITHM",
    "sqrt": "SQRT",
    "square": "SQUARE",
    "abs": "ABSOLUTE",
}
NON_LINEAR = ("relu", "sigmoid", "tanh")


class GraphBuilder:
    """Builds nodes for one replica: ``env`` maps node ids to the tensors holding them."""

    def __init__(
        self,
        graph: Graph,
        prog: Sequence,
        env: dict[int, Tensor] | None = None,
        ipu_offset: int = 0,
        ipus_per_replica: int | None = None,
        target_text: str = "",
    ) -> None:
        self.graph = graph
        self.prog = prog
        self.env: dict[int, Tensor] = {} if env is None else env
        self.ipu_offset = ipu_offset
        self.ipus_per_replica = ipus_per_replica or graph.target.num_ipus
        self.target_text = target_text or graph.target.describe()
        self.extra: dict[int, Tensor] = {}  # second results (the loss op's gradient)
        self._copies: dict[tuple[int, int], Tensor] = {}
        self._framework_ops: dict[int, int] = {}  # id of a FrameworkScope -> its context

    # -- placement ------------------------------------------------------------------------
    def ipu_of(self, node: Node) -> int:
        if node.shard >= self.ipus_per_replica:
            text = shard_limit_text(node.shard, self.ipus_per_replica, self.target_text)
            raise ShardError(f"{node.where()}: {text}")
        return self.ipu_offset + node.shard

    @contextlib.contextmanager
    def placed(self, node: Node) -> Iterator[int]:
        """The node's name scopes, source line and IPU, as when it was traced."""
        ipu = self.ipu_of(node)
        with contextlib.ExitStack() as stack:
            for scope in node.scope:
                stack.enter_context(name_scope(scope))
                if isinstance(scope, FrameworkScope):  # one context per framework op
                    known = self._framework_ops.get(id(scope), -1)
                    context = stack.enter_context(self.graph.debug.framework_op(scope, known))
                    self._framework_ops[id(scope)] = context
            stack.enter_context(source_location(node.location))
            stack.enter_context(on_ipu(self.graph, ipu))
            yield ipu

    def build(self, nodes: Iterable[Node]) -> None:
        for node in nodes:
            if node.id in self.env or node.op == "const":
                continue
            if node.op in SOURCE_OPS:
                raise EngineError(f"{node.where()}: {node.op} {node.name!r} has no tensor")
            with self.placed(node) as ipu:
                self.env[node.id] = getattr(self, f"_op_{_handler(node.op)}")(node, ipu)

    def value(self, node: Node, ipu: int) -> Tensor:
        """``node``'s tensor on ``ipu``: itself if it lives there, else a copy made once."""
        if node.op == "const" and node.id not in self.env:
            return self._constant(node, ipu)
        tensor = self.env[node.id]
        if self.graph.target.num_ipus == 1:  # one IPU: every tensor is on the op's IPU
            return tensor
        tiles = self.graph.tile_array(tensor)
        home = ipu_tiles(self.graph, ipu)
        if tiles.size == 0 or (tiles.min() >= home.start and tiles.max() < home.stop):
            return tensor
        key = (node.id, ipu)
        if key not in self._copies:
            self._copies[key] = self._ipu_copy(node, tensor, tiles, ipu)
        return self._copies[key]

    def _ipu_copy(self, node: Node, tensor: Tensor, tiles: np.ndarray, ipu: int) -> Tensor:
        graph = self.graph
        per_ipu = graph.target.tiles_per_ipu
        dst = graph.add_variable(tensor.type, tensor.shape, f"{node.name}/ipu{ipu}")
        src_ipu = tiles // per_ipu
        if np.all(src_ipu == src_ipu[0]):  # the same layout, one IPU over
            mapping = tiles + (ipu - int(src_ipu[0])) * per_ipu
        else:
            mapping = linear_tile_array(tensor.num_elements, ipu_tiles(graph, ipu))
        graph.set_tile_mapping_array(dst, mapping)
        copy = Copy(tensor, dst, name=f"IpuCopy/{node.name}")
        copy.debug_id = framework_op(
            graph, IPU_COPY, "IpuCopy", {"to_ipu": ipu, "shape": list(tensor.shape)}
        )
        self.prog.add(copy)
        return dst

    def _constant(self, node: Node, ipu: int) -> Tensor:
        key = (node.id, ipu)
        if key not in self._copies:
            value = node.attrs["value"]
            const = self.graph.add_constant(node.type, node.shape, value, node.name)
            self.graph.set_tile_mapping_array(
                const, linear_tile_array(const.num_elements, ipu_tiles(self.graph, ipu))
            )
            self._copies[key] = const
        return self._copies[key]

    def args(self, node: Node, ipu: int) -> list[Tensor]:
        return [self.value(i, ipu) for i in node.inputs]

    # -- one method per op ------------------------------------------------------------------
    def _op_binary(self, node: Node, ipu: int) -> Tensor:
        a, b = node.inputs
        op = BINARY[node.op]
        for scalar, other, swap in ((b, a, False), (a, b, True)):
            if scalar.op == "const" and scalar.shape == () and other.shape == node.shape:
                c = expr.Const(scalar.attrs["value"].item())
                e = expr.Binary(op, c, expr._1) if swap else expr.Binary(op, expr._1, c)
                return popops.map(self.graph, e, [self.value(other, ipu)], self.prog, node.name)
        ta, tb = self.args(node, ipu)
        return popops.binary(self.graph, op, ta, tb, self.prog, node.name)

    def _op_unary(self, node: Node, ipu: int) -> Tensor:
        (a,) = self.args(node, ipu)
        return popops.unary(self.graph, UNARY[node.op], a, self.prog, node.name)

    def _op_non_linearity(self, node: Node, ipu: int) -> Tensor:
        (a,) = self.args(node, ipu)
        return popnn.non_linearity(self.graph, node.op, a, self.prog, node.name)

    def _op_nonlinearity_grad(self, node: Node, ipu: int) -> Tensor:
        out, grad = self.args(node, ipu)
        kind = node.attrs["kind"]
        return popnn.non_linearity_input_gradient(self.graph, kind, out, grad, self.prog)

    def _op_matmul(self, node: Node, ipu: int) -> Tensor:
        a, b = self.args(node, ipu)
        return poplin.mat_mul(self.graph, a, b, self.prog, node.name, matmul_options(node))

    def _op_reduce(self, node: Node, ipu: int) -> Tensor:
        (a,) = self.args(node, ipu)
        attrs = node.attrs
        if not attrs["axes"]:
            return a
        return popops.reduce(
            self.graph, a, list(attrs["axes"]), attrs["op"], self.prog, node.name, attrs["scale"]
        )

    def _op_reshape(self, node: Node, ipu: int) -> Tensor:
        return self.env_or_value(node.inputs[0], ipu).reshape(node.attrs["shape"])

    def _op_transpose(self, node: Node, ipu: int) -> Tensor:
        return self.env_or_value(node.inputs[0], ipu).dim_shuffle(node.attrs["perm"])

    def _op_slice(self, node: Node, ipu: int) -> Tensor:
        return self.env_or_value(node.inputs[0], ipu)[node.attrs["key"]]

    def env_or_value(self, node: Node, ipu: int) -> Tensor:
        """Views alias their source wherever it lives; consumers copy what they need."""
        if node.id in self.env:
            return self.env[node.id]
        return self.value(node, ipu)

    def _op_map(self, node: Node, ipu: int) -> Tensor:
        expression = node.attrs["expr"]
        return popops.map(self.graph, expression, self.args(node, ipu), self.prog, node.name)

    def _op_concat(self, node: Node, ipu: int) -> Tensor:
        return concat([self.env_or_value(i, ipu) for i in node.inputs], node.attrs["axis"])

    def _op_broadcast(self, node: Node, ipu: int) -> Tensor:
        return broadcast_to(self.env_or_value(node.inputs[0], ipu), node.attrs["shape"])

    def _op_matmul_batched(self, node: Node, ipu: int) -> Tensor:
        """One grouped poplin product over the broadcast batch (views, no copies)."""
        a, b = self.args(node, ipu)
        batch = node.shape[:-2]
        groups = int(np.prod(batch, dtype=np.int64))
        a3 = broadcast_to(a, (*batch, *a.shape[-2:])).reshape([groups, *a.shape[-2:]])
        b3 = broadcast_to(b, (*batch, *b.shape[-2:])).reshape([groups, *b.shape[-2:]])
        options = matmul_options(node)
        out = poplin.mat_mul_grouped(self.graph, a3, b3, self.prog, node.name, options)
        return out.reshape(node.shape)

    def _op_select(self, node: Node, ipu: int) -> Tensor:
        cond, a, b = self.args(node, ipu)
        return popops.select(self.graph, cond, a, b, self.prog, node.name)

    def _op_gather(self, node: Node, ipu: int) -> Tensor:
        data, indices = self.args(node, ipu)
        return popops.gather(self.graph, data, indices, node.attrs["axis"], self.prog, node.name)

    def _op_scatter_nd(self, node: Node, ipu: int) -> Tensor:
        data, indices, updates = self.args(node, ipu)
        return popops.scatter_nd(
            self.graph, data, indices, updates, self.prog, node.name, node.attrs["reduction"]
        )

    def _op_scatter_elements(self, node: Node, ipu: int) -> Tensor:
        data, indices, updates = self.args(node, ipu)
        a = node.attrs
        return popops.scatter_elements(
            self.graph, data, indices, updates, a["axis"], self.prog, node.name, a["reduction"]
        )

    def _op_resample(self, node: Node, ipu: int) -> Tensor:
        (x,) = self.args(node, ipu)
        a = node.attrs
        return popops.resample(
            self.graph, x, a["axis"], a["rows"], a["weights"], self.prog, node.name, a["fill"]
        )

    def _op_lrn(self, node: Node, ipu: int) -> Tensor:
        (x,) = self.args(node, ipu)
        a = node.attrs
        return popnn.lrn(
            self.graph, x, a["size"], self.prog, node.name, alpha=a["alpha"], beta=a["beta"],
            bias=a["bias"],
        )  # fmt: skip

    def _op_conv(self, node: Node, ipu: int) -> Tensor:
        x, w, *bias = self.args(node, ipu)
        a = node.attrs
        return poplin.convolution(
            self.graph, x, w, self.prog, node.name, a["stride"], a["padding"],
            poplin_options(node), groups=a["groups"], dilation=a["dilation"],
            bias=bias[0] if bias else None,
        )  # fmt: skip

    def _op_conv_transpose(self, node: Node, ipu: int) -> Tensor:
        x, w, *bias = self.args(node, ipu)
        a = node.attrs
        return poplin.conv_transpose(
            self.graph, x, w, self.prog, node.name, a["stride"], a["padding"],
            poplin_options(node), output_padding=a["output_padding"], groups=a["groups"],
            dilation=a["dilation"], bias=bias[0] if bias else None,
        )  # fmt: skip

    def _op_lstm(self, node: Node, ipu: int) -> Tensor:
        return self._recurrent(node, ipu, popnn.lstm)

    def _op_gru(self, node: Node, ipu: int) -> Tensor:
        return self._recurrent(node, ipu, popnn.gru)

    def _recurrent(self, node: Node, ipu: int, layer: Any) -> Tensor:
        """popnn's LSTM or GRU; its outputs and last states packed along the first
        dimension (views), as the traced node holds them."""
        x, w_in, w_rec, *rest = self.args(node, ipu)
        a = dict(node.attrs)
        optional = dict(zip(a.pop("present"), rest, strict=True))
        outputs = layer(
            self.graph, x, w_in, w_rec, self.prog, node.name, **optional, **a,
            options=poplin_options(node),
        )  # fmt: skip
        y, states = outputs[0], outputs[1:]
        return concat([y, *(s.reshape([1, *s.shape]) for s in states)], 0)

    def _op_pool(self, node: Node, ipu: int) -> Tensor:
        (x,) = self.args(node, ipu)
        a = node.attrs
        kw = {"stride": a["stride"], "padding": a["padding"], "ceil_mode": a["ceil_mode"]}
        if a["kind"] == "max":
            return popnn.max_pool(self.graph, x, a["kernel"], self.prog, node.name, **kw)
        kw["count_include_pad"] = a["count_include_pad"]
        return popnn.avg_pool(self.graph, x, a["kernel"], self.prog, node.name, **kw)

    def _op_global_avg_pool(self, node: Node, ipu: int) -> Tensor:
        (x,) = self.args(node, ipu)
        return popnn.global_avg_pool(self.graph, x, self.prog, node.name)

    def _op_softmax(self, node: Node, ipu: int) -> Tensor:
        (a,) = self.args(node, ipu)
        return popnn.softmax(self.graph, a, self.prog, node.name)

    def _op_cast(self, node: Node, ipu: int) -> Tensor:
        (a,) = self.args(node, ipu)
        return popops.cast(self.graph, a, node.attrs["type"], self.prog, node.name)

    def _op_softmax_xent(self, node: Node, ipu: int) -> Tensor:
        logits, labels = self.args(node, ipu)
        probs = popnn.softmax(self.graph, logits, self.prog, "probs")
        loss, deltas = popnn.calc_loss(self.graph, probs, labels, self.prog, "crossEntropy")
        self.extra[node.id] = deltas
        return loss

    def _op_softmax_xent_grad(self, node: Node, ipu: int) -> Tensor:
        return self.extra[node.inputs[0].id]


def _handler(op: str) -> str:
    if op in BINARY:
        return "binary"
    if op in UNARY:
        return "unary"
    if op in NON_LINEAR:
        return "non_linearity"
    return op


def output_tensor(builder: GraphBuilder, node: Node) -> Tensor:
    """The tensor holding an output (a constant output gets a tensor of its own)."""
    if node.id in builder.env:
        return builder.env[node.id]
    return builder.value(node, builder.ipu_of(node))
