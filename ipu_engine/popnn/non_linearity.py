"""popnn's non-linearities, softmax and losses.

Non-linearities and softmax are built from popops ops (so their compute sets show up
under the popnn op in reports); cross-entropy has its own codelet that also gives the
softmax gradient ``probs - one_hot(labels)``.
"""

from __future__ import annotations

import numpy as np

from ipu_engine import popops
from ipu_engine.codelets.nn import cross_entropy as cross_entropy_codelet
from ipu_engine.common.arguments import name_arg
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.popops.expr import _1, _2, exp
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context, split_by_tile

NON_LINEARITIES = {"relu": "RELU", "sigmoid": "SIGMOID", "tanh": "TANH", "gelu": "GELU"}


def non_linearity(
    graph: Graph, kind: str, t: Tensor, prog: SequenceProgram, debug_prefix: str = ""
) -> Tensor:
    """``relu``, ``sigmoid``, ``tanh`` or ``gelu`` of ``t`` as a new tensor."""
    if name_arg(kind, "popnn::nonLinearity: the kind") not in NON_LINEARITIES:
        raise GraphError(
            f"popnn::nonLinearity: unknown kind {kind!r}; use one of {sorted(NON_LINEARITIES)}"
        )
    with op_context(graph, f"popnn::{kind}", debug_prefix):
        return popops.unary(graph, NON_LINEARITIES[kind], t, prog, debug_prefix or kind)


def relu(graph: Graph, t: Tensor, prog: SequenceProgram, debug_prefix: str = "") -> Tensor:
    return non_linearity(graph, "relu", t, prog, debug_prefix)


def sigmoid(graph: Graph, t: Tensor, prog: SequenceProgram, debug_prefix: str = "") -> Tensor:
    return non_linearity(graph, "sigmoid", t, prog, debug_prefix)


def tanh(graph: Graph, t: Tensor, prog: SequenceProgram, debug_prefix: str = "") -> Tensor:
    return non_linearity(graph, "tanh", t, prog, debug_prefix)


def non_linearity_input_gradient(
    graph: Graph,
    kind: str,
    out: Tensor,
    out_grad: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
) -> Tensor:
    """The gradient at the input of a non-linearity, from its output and output gradient."""
    name_arg(kind, "popnn::nonLinearityInputGradient: the kind")
    if kind == "relu":
        expr = popops.expr.select(_2, 0.0, _1 > 0.0)
    elif kind == "sigmoid":
        expr = _2 * _1 * (1.0 - _1)
    elif kind == "tanh":
        expr = _2 * (1.0 - _1 * _1)
    else:
        raise GraphError(f"popnn::nonLinearityInputGradient: no gradient for {kind!r}")
    with op_context(graph, f"popnn::{kind}InputGradient", debug_prefix):
        return popops.map(graph, expr, [out, out_grad], prog, debug_prefix or f"{kind}_grad")


def softmax(graph: Graph, t: Tensor, prog: SequenceProgram, debug_prefix: str = "") -> Tensor:
    """Softmax over the last dimension, computed stably (max subtracted first)."""
    check_tensors(graph, "popnn::softmax", t)
    if t.rank < 1 or t.shape[-1] == 0:
        raise ShapeError(f"popnn::softmax: {t.name!r} {t.shape} has no classes to normalise over")
    if t.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"popnn::softmax: needs float or half, {t.name!r} is {t.type!r}")
    last = t.rank - 1
    keep_shape = (*t.shape[:-1], 1)
    with op_context(graph, "popnn::softmax", debug_prefix):
        peak = popops.reduce(graph, t, [last], "max", prog, "max").reshape(keep_shape)
        shifted = popops.map(graph, exp(_1 - _2), [t, peak], prog, "exp")
        total = popops.reduce(graph, shifted, [last], "add", prog, "sum").reshape(keep_shape)
        return popops.map(graph, _1 / _2, [shifted, total], prog, debug_prefix or "softmax")


def calc_loss(
    graph: Graph, probs: Tensor, labels: Tensor, prog: SequenceProgram, debug_prefix: str = ""
) -> tuple[Tensor, Tensor]:
    """Cross-entropy loss per sample of softmax outputs ``probs`` [B, C] against integer
    ``labels`` [B], and the gradient at the softmax input, ``probs - one_hot(labels)``."""
    api = "popnn::calcLoss"
    check_tensors(graph, api, probs, labels)
    if probs.rank != 2 or labels.shape != (probs.shape[0],):
        raise ShapeError(
            f"{api}: needs probs [B, C] and labels [B]; got {probs.shape} and {labels.shape}"
        )
    if labels.type.numpy_dtype.kind not in "iu":
        raise TypeMismatchError(
            f"{api}: labels {labels.name!r} must be integers, not {labels.type!r}"
        )
    batch, classes = probs.shape
    with op_context(graph, api, debug_prefix, {"classes": classes}) as debug_id:
        loss = graph.add_variable(probs.type, [batch], "loss")
        graph.set_tile_mapping_array(loss, graph.tile_array(labels))
        deltas = graph.clone(probs, "deltas")
        split = split_by_tile(graph, labels)  # one vertex per tile holding labels
        rows = split.order if split.order is not None else np.arange(batch)
        row_addr = probs.addr[rows].reshape(-1)
        cs = graph.add_compute_set("loss")
        block = graph.add_vertex_block(
            cs,
            cross_entropy_codelet(probs.type, labels.type),
            split.tiles,
            {
                "probs": (row_addr, split.offsets * classes),
                "label": split.edge(labels),
                "loss": split.edge(loss),
                "deltas": (deltas.addr[rows].reshape(-1), split.offsets * classes),
            },
        )
        block.state["numClasses"][:] = classes
        add_program(prog, Execute(cs), debug_id)
    return loss, deltas


def cross_entropy(
    graph: Graph, probs: Tensor, labels: Tensor, prog: SequenceProgram, debug_prefix: str = ""
) -> Tensor:
    """Cross-entropy loss per sample: ``-log(probs[i, labels[i]])``."""
    loss, _ = calc_loss(graph, probs, labels, prog, debug_prefix)
    return loss
