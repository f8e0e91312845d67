"""LSTM and GRU: popnn's recurrent layers, forward, reverse or bidirectional, with initial
states, sequence lengths, peepholes, clip, input_forget, linear_before_reset, custom
activations and the batch-first layout. Weights known on the host are laid out there
([D, 4H, I] -> [D, I, 4H], a view) and their two biases summed once."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.codelets.rnn import ACTIVATIONS
from ipu_engine.frontend.rnn_ops import gru, lstm
from ipu_engine.onnx.lowering.common import traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering

_DIRECTIONS = {"forward": (False,), "reverse": (True,), "bidirectional": (False, True)}
#: ONNX's defaults of the activations that take parameters (those of the operators named)
_ALPHA = {
    "Affine": 1.0,
    "LeakyRelu": 0.01,
    "ThresholdedRelu": 1.0,
    "ScaledTanh": 1.0,
    "HardSigmoid": 0.2,
    "Elu": 1.0,
}
_BETA = {"Affine": 0.0, "ScaledTanh": 1.0, "HardSigmoid": 0.5}


def _activations(ctx: NodeContext, per_direction: tuple[str, ...], directions: int) -> list:
    """Per direction, its activations as (name, alpha, beta): alphas and betas are taken in
    order by the activations that have them."""
    names = [v.decode() if isinstance(v, bytes) else str(v) for v in ctx.attr("activations", [])]
    names = names or list(per_direction) * directions
    if len(names) != len(per_direction) * directions:
        raise ctx.error(f"activations {names}: needs {len(per_direction)} per direction")
    known = {k.lower(): k for k in ACTIVATIONS}
    alphas, betas = list(ctx.attr("activation_alpha", [])), list(ctx.attr("activation_beta", []))
    resolved = []
    for name in names:
        canonical = known.get(name.lower())
        if canonical is None:
            raise ctx.unsupported("activations", name)
        alpha = alphas.pop(0) if canonical in _ALPHA and alphas else _ALPHA.get(canonical, 0.0)
        beta = betas.pop(0) if canonical in _BETA and betas else _BETA.get(canonical, 0.0)
        resolved.append((canonical, float(alpha), float(beta)))
    count = len(per_direction)
    return [tuple(resolved[d * count : (d + 1) * count]) for d in range(directions)]


def _weight(ctx: NodeContext, index: int, value: Any) -> Any:
    """[D, G*H, X] -> [D, X, G*H]: a view, made a weight when known on the host."""
    if value is None or traced(value):
        return None if value is None else value.transpose((0, 2, 1))
    return ctx.weight(ctx.node.input[index], np.transpose(np.asarray(value), (0, 2, 1)))


def _host_or_weight(ctx: NodeContext, name: str, value: Any) -> Any:
    if value is None or traced(value):
        return value
    return ctx.weight(name, np.asarray(value, dtype=np.float32))


def _common(ctx: NodeContext, x: Any, seq_lens: Any, states: list[Any]) -> tuple:
    """(x as [T, B, I], sequence lengths or None, states as [D, B, H], directions)."""
    if not traced(x):
        raise ctx.error("its input must be computed on the IPU (constant folding is not done)")
    direction = ctx.attr("direction", "forward")
    if direction not in _DIRECTIONS:
        raise ctx.unsupported("direction", direction)
    batch_first = bool(ctx.attr("layout", 0))
    if batch_first:
        x = x.transpose((1, 0, 2))
        states = [s if s is None else s.transpose((1, 0, 2)) for s in states]
    if seq_lens is not None and not traced(seq_lens):
        lengths = np.asarray(seq_lens).astype(np.int64)
        if np.any((lengths < 1) | (lengths > x.shape[0])):
            raise ctx.error(f"sequence_lens {lengths.tolist()} must lie in 1..{x.shape[0]}")
        seq_lens = None if np.all(lengths == x.shape[0]) else lengths.astype(np.int32)
    states = [_host_or_weight(ctx, f"{ctx.name}.state{i}", s) for i, s in enumerate(states)]
    return x, seq_lens, states, _DIRECTIONS[direction], batch_first


def _outputs(ctx: NodeContext, results: list[Any], batch_first: bool) -> list[Any]:
    y, *states = results
    if batch_first:  # Y [B, T, D, H], states [B, D, H]
        y = y.transpose((2, 0, 1, 3))
        states = [s.transpose((1, 0, 2)) for s in states]
    return [y, *states]


def _clip(ctx: NodeContext) -> float | None:
    clip = ctx.attr("clip")
    return None if clip is None else float(clip)


@lowering("LSTM", since=7, host_weights=True)
def lstm_(
    ctx: NodeContext,
    x: Any,
    w: Any,
    r: Any,
    b: Any = None,
    seq_lens: Any = None,
    initial_h: Any = None,
    initial_c: Any = None,
    p: Any = None,
) -> list[Any]:
    x, seq_lens, (h0, c0), reverse, batch_first = _common(ctx, x, seq_lens, [initial_h, initial_c])
    hidden = r.shape[-1]
    bias = None
    if b is not None:
        bias = b[:, : 4 * hidden] + b[:, 4 * hidden :]
        bias = _host_or_weight(ctx, f"{ctx.name}.bias", bias)
    results = lstm(
        x,
        _weight(ctx, 1, w),
        _weight(ctx, 2, r),
        bias=bias,
        initial_h=h0,
        initial_c=c0,
        peepholes=_host_or_weight(ctx, ctx.node.input[7] if p is not None else "", p),
        seq_lens=seq_lens,
        reverse=reverse,
        activations=_activations(ctx, ("Sigmoid", "Tanh", "Tanh"), len(reverse)),
        clip=_clip(ctx),
        input_forget=bool(ctx.attr("input_forget", 0)),
    )
    return _outputs(ctx, results, batch_first)


@lowering("GRU", since=7, host_weights=True)
def gru_(
    ctx: NodeContext,
    x: Any,
    w: Any,
    r: Any,
    b: Any = None,
    seq_lens: Any = None,
    initial_h: Any = None,
) -> list[Any]:
    x, seq_lens, (h0,), reverse, batch_first = _common(ctx, x, seq_lens, [initial_h])
    hidden = r.shape[-1]
    bias_in = bias_rec = None
    if b is not None:
        bias_in = _host_or_weight(ctx, f"{ctx.name}.bias_in", b[:, : 3 * hidden])
        bias_rec = _host_or_weight(ctx, f"{ctx.name}.bias_rec", b[:, 3 * hidden :])
    results = gru(
        x,
        _weight(ctx, 1, w),
        _weight(ctx, 2, r),
        bias_in=bias_in,
        bias_rec=bias_rec,
        initial_h=h0,
        seq_lens=seq_lens,
        reverse=reverse,
        activations=_activations(ctx, ("Sigmoid", "Tanh"), len(reverse)),
        clip=_clip(ctx),
        reset_after=bool(ctx.attr("linear_before_reset", 0)),
    )
    return _outputs(ctx, results, batch_first)
