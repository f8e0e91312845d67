"""Neural-network operators: Softmax (popnn), normalisations composed of popops reductions
and maps, reductions, Dropout (inference: the identity).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.frontend import ops
from ipu_engine.onnx.lowering.common import traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering


def _softmax_last(x: Any) -> Any:
    if traced(x):
        return ops.softmax(x)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@lowering("Softmax", "LogSoftmax", since=1)
def softmax(ctx: NodeContext, x: Any) -> Any:
    rank = len(x.shape)
    if ctx.opset < 13:  # the input seen as a matrix [prod(dims < axis), prod(dims >= axis)]
        axis = int(ctx.attr("axis", 1)) % max(rank, 1)
        rows = int(np.prod(x.shape[:axis], dtype=np.int64))
        out = _softmax_last(x.reshape(rows, -1)).reshape(x.shape)
    else:
        axis = int(ctx.attr("axis", -1)) % max(rank, 1)
        if axis == rank - 1:
            out = _softmax_last(x)
        else:
            perm = list(range(rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            out = _softmax_last(x.transpose(tuple(perm))).transpose(tuple(perm))
    return np.log(out) if ctx.op_type == "LogSoftmax" else out


_REDUCE = {
    "ReduceSum": ("sum", 13),
    "ReduceMean": ("mean", 18),
    "ReduceMax": ("max", 18),
    "ReduceMin": ("min", 18),
    "ReduceSumSquare": ("sum", 18),
    "ReduceL1": ("sum", 18),
    "ReduceL2": ("sum", 18),
    "ReduceLogSum": ("sum", 18),
    "ReduceLogSumExp": ("sum", 18),
}


@lowering(*_REDUCE, since=1)
def reduce(ctx: NodeContext, x: Any, axes: Any = None) -> Any:
    method, axes_input_since = _REDUCE[ctx.op_type]
    if ctx.opset < axes_input_since:
        axes = ctx.attr("axes")
    elif traced(axes):
        raise ctx.error("its axes must be known before the model runs")
    chosen = None if axes is None else tuple(int(a) for a in np.asarray(axes).reshape(-1))
    if not chosen:
        if ctx.attr("noop_with_empty_axes", 0):
            return x
        chosen = tuple(range(len(x.shape)))
    chosen = tuple(sorted(int(a) % max(len(x.shape), 1) for a in chosen))
    dtype = None if traced(x) else np.asarray(x).dtype
    keepdims = bool(ctx.attr("keepdims", 1))
    op = ctx.op_type
    if op == "ReduceLogSumExp":  # log(sum(exp(x - max))) + max: no overflow
        top = x.max(axis=chosen, keepdims=True)
        out = np.log(np.exp(x - top).sum(axis=chosen, keepdims=True)) + top
        out = (
            out if keepdims else out.reshape([d for i, d in enumerate(x.shape) if i not in chosen])
        )
    else:
        if op in ("ReduceSumSquare", "ReduceL2"):
            x = x * x
        elif op == "ReduceL1":
            x = np.absolute(x)
        out = getattr(x, method)(axis=chosen, keepdims=keepdims)
        out = np.sqrt(out) if op == "ReduceL2" else np.log(out) if op == "ReduceLogSum" else out
    return out if traced(out) else np.asarray(out).astype(dtype)


def _normalise(x: Any, axes: tuple[int, ...], epsilon: float) -> tuple[Any, Any, Any]:
    """(x - mean) / sqrt(var + eps) over ``axes``, with the mean and 1/std it used."""
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=axes, keepdims=True)
    inv_std = np.divide(1.0, np.sqrt(var + np.float32(epsilon)))
    return centred * inv_std, mean, inv_std


@lowering("LayerNormalization", since=17)
def layer_norm(ctx: NodeContext, x: Any, scale: Any, bias: Any = None) -> list[Any]:
    rank = len(x.shape)
    axis = int(ctx.attr("axis", -1)) % rank
    y, mean, inv_std = _normalise(x, tuple(range(axis, rank)), float(ctx.attr("epsilon", 1e-5)))
    y = y * scale
    if bias is not None:
        y = y + bias
    return [y, mean, inv_std][: len(ctx.node.output)]


@lowering("InstanceNormalization", since=6)
def instance_norm(ctx: NodeContext, x: Any, scale: Any, bias: Any) -> Any:
    per_channel = (-1,) + (1,) * (len(x.shape) - 2)
    axes = tuple(range(2, len(x.shape)))
    y, _, _ = _normalise(x, axes, float(ctx.attr("epsilon", 1e-5)))
    return y * scale.reshape(per_channel) + bias.reshape(per_channel)


@lowering("GroupNormalization", since=18)
def group_norm(ctx: NodeContext, x: Any, scale: Any, bias: Any) -> Any:
    """Normalised over each group of C / num_groups channels and the spatial axes; scale and
    bias per channel (opset 21) or per group (opset 18)."""
    groups = int(ctx.attr("num_groups"))
    n, c = x.shape[:2]
    if c % groups:
        raise ctx.error(f"num_groups={groups} does not divide {c} channels")
    grouped = x.reshape(n, groups, -1)
    y, _, _ = _normalise(grouped, (2,), float(ctx.attr("epsilon", 1e-5)))
    per = (-1,) + (1,) * (len(x.shape) - 2)
    if ctx.opset < 21:  # one scale and bias per group
        y = y * scale.reshape(-1, 1) + bias.reshape(-1, 1)
        return y.reshape(x.shape)
    return y.reshape(x.shape) * scale.reshape(per) + bias.reshape(per)


@lowering("MeanVarianceNormalization", since=9)
def mean_variance_norm(ctx: NodeContext, x: Any) -> Any:
    axes = tuple(int(a) % len(x.shape) for a in ctx.attr("axes", [0, 2, 3]))
    y, _, _ = _normalise(x, axes, 1e-9)
    return y


@lowering("BatchNormalization", since=6, host_weights=True)
def batch_norm(ctx: NodeContext, x: Any, scale: Any, bias: Any, mean: Any, var: Any) -> Any:
    """Inference: ``x * s + t`` per channel, ``s = scale / sqrt(var + eps)`` and
    ``t = bias - mean * s`` folded on the host into two weights."""
    if ctx.attr("training_mode", 0) or len([o for o in ctx.node.output if o]) > 1:
        raise ctx.error("training mode (running statistics as outputs) is not supported")
    eps = np.float32(ctx.attr("epsilon", 1e-5))
    per_channel = (-1,) + (1,) * (len(x.shape) - 2)
    if traced(scale, bias, mean, var):  # statistics fed at run time: computed on the IPU
        s = scale / np.sqrt(var + eps)
        return x * s.reshape(per_channel) + (bias - mean * s).reshape(per_channel)
    s = np.asarray(scale, np.float32) / np.sqrt(np.asarray(var, np.float32) + eps)
    t = np.asarray(bias, np.float32) - np.asarray(mean, np.float32) * s
    s, t = s.reshape(per_channel), t.reshape(per_channel)
    if traced(x):
        s, t = ctx.weight(f"{ctx.name}.scale", s), ctx.weight(f"{ctx.name}.shift", t)
    return x * s + t


@lowering("Dropout", since=6)
def dropout(ctx: NodeContext, x: Any, ratio: Any = None, training: Any = None) -> list[Any]:
    no_drop = ratio is not None and not traced(ratio) and float(np.asarray(ratio)) == 0.0
    if training is not None and not no_drop and (traced(training) or bool(np.asarray(training))):
        raise ctx.error("training_mode must be a constant False (inference only)")
    outputs = [x]
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        outputs.append(np.ones(x.shape, dtype=np.bool_))
    return outputs
