"""Traced recurrent layers: an LSTM or GRU over a whole sequence as one node each, built by
``frontend/builder.py`` with ``popnn.lstm`` / ``popnn.gru``. The node's value packs the
outputs [T, D, B, H] and the last states [D, B, H] along its first dimension; the results
are views of it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.frontend.traced import TracedTensor, active_trace, as_node, user_line

#: the optional inputs of each layer, in the order its node holds them
OPTIONAL = {
    "lstm": ("bias", "initial_h", "initial_c", "peepholes", "seq_lens"),
    "gru": ("bias_in", "bias_rec", "initial_h", "seq_lens"),
}


def _node(
    kind: str,
    x: Any,
    w_in: Any,
    w_rec: Any,
    optional: dict[str, Any],
    attrs: dict[str, Any],
    states: int,
) -> list[TracedTensor]:
    trace = active_trace(x, w_in, w_rec, *optional.values())
    nx = as_node(trace, x)
    if not isinstance(x, TracedTensor) or len(nx.shape) != 3 or not nx.type.is_float:
        raise ShapeError(
            f"{user_line()}: {kind} needs a traced float [T, B, I] input, not {nx.describe()}"
        )
    inputs = [nx, as_node(trace, w_in, nx.type), as_node(trace, w_rec, nx.type)]
    present = []
    for name in OPTIONAL[kind]:
        value = optional.get(name)
        if value is None:
            continue
        if name == "seq_lens":
            node = as_node(
                trace,
                value if isinstance(value, TracedTensor) else np.asarray(value).astype(np.int32),
            )
            if node.type.is_float:
                raise TypeMismatchError(f"{user_line()}: sequence lengths must be integers")
        else:
            node = as_node(trace, value, nx.type)
        inputs.append(node)
        present.append(name)
    if any(n.type != nx.type for n in inputs[1:3]):
        raise TypeMismatchError(f"{user_line()}: {kind} weights must be {nx.type.name}")
    steps, batch, _ = nx.shape
    directions, hidden = len(attrs["reverse"]), inputs[2].shape[1]
    shape = (steps + states, directions, batch, hidden)
    packed = TracedTensor(
        trace,
        trace.add(kind, tuple(inputs), shape, nx.type, {**attrs, "present": tuple(present)}, kind),
    )
    return [packed[:steps]] + [packed[steps + i] for i in range(states)]


def lstm(
    x: Any,
    w_in: Any,
    w_rec: Any,
    *,
    bias: Any = None,
    initial_h: Any = None,
    initial_c: Any = None,
    peepholes: Any = None,
    seq_lens: Any = None,
    reverse: Sequence[bool] = (False,),
    activations: Any = None,
    clip: float | None = None,
    input_forget: bool = False,
) -> list[TracedTensor]:
    """[outputs [T, D, B, H], last hidden [D, B, H], last cell [D, B, H]] of an LSTM over
    ``x`` [T, B, I] (see ``popnn.lstm`` for the operands' shapes)."""
    optional = {
        "bias": bias,
        "initial_h": initial_h,
        "initial_c": initial_c,
        "peepholes": peepholes,
        "seq_lens": seq_lens,
    }
    attrs = {
        "reverse": tuple(bool(r) for r in reverse),
        "activations": activations,
        "clip": clip,
        "input_forget": bool(input_forget),
    }
    return _node("lstm", x, w_in, w_rec, optional, attrs, 2)


def gru(
    x: Any,
    w_in: Any,
    w_rec: Any,
    *,
    bias_in: Any = None,
    bias_rec: Any = None,
    initial_h: Any = None,
    seq_lens: Any = None,
    reverse: Sequence[bool] = (False,),
    activations: Any = None,
    clip: float | None = None,
    reset_after: bool = False,
) -> list[TracedTensor]:
    """[outputs [T, D, B, H], last hidden [D, B, H]] of a GRU over ``x`` [T, B, I] (see
    ``popnn.gru`` for the operands' shapes)."""
    optional = {
        "bias_in": bias_in,
        "bias_rec": bias_rec,
        "initial_h": initial_h,
        "seq_lens": seq_lens,
    }
    attrs = {
        "reverse": tuple(bool(r) for r in reverse),
        "activations": activations,
        "clip": clip,
        "reset_after": bool(reset_after),
    }
    return _node("gru", x, w_in, w_rec, optional, attrs, 1)
