"""Walking a model's nodes in order over an environment {value name -> host array | traced
tensor}: each node is lowered inside its debug scopes (layer "ONNX", then the node) and its
placement (``__ipu_number`` shard, ``__pipeline_stage`` stage, or a balanced split).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx

from ipu_engine.debug import FrameworkScope, name_scope, source_location
from ipu_engine.errors import OnnxError, OptionError
from ipu_engine.frontend.available_memory import apply_proportion_since
from ipu_engine.frontend.ir import current_trace, pipeline_stage, shard
from ipu_engine.frontend.traced import TracedTensor
from ipu_engine.onnx.lowering import conv, elementwise, linalg, nn, shape  # noqa: F401
from ipu_engine.onnx.lowering.common import float_type, traced
from ipu_engine.onnx.lowering.registry import find_lowering, node_context
from ipu_engine.onnx.model import OnnxModel

LAYER = "ONNX"  # the layer Operations and Insights show the model's nodes under
MEMORY_ATTRIBUTE = "__available_memory_proportion"  # PopART's, per node
Placement = tuple[int | None, int | None]  # (shard, pipeline stage) of a node


def check_supported(model: OnnxModel) -> None:
    """Every node has a lowering at the model's opset: refused before anything is built."""
    for index, node in enumerate(model.graph.node):
        find_lowering(node_context(node, index, model.opset, model.source, model.value_types))


def node_scope(node: onnx.NodeProto, index: int) -> str:
    """The node's name scope: its name (with its op type when the name lacks it), '/'-free."""
    name = node.name.replace("/", ".").strip(".") or f"{node.op_type}_{index}"
    return name if node.op_type in name else f"{node.op_type}_{name}"


def placements(model: OnnxModel, ipus: int, pipelined: bool) -> list[Placement]:
    """Each node's (shard, stage): PopART's attributes when the model has them, else ``ipus``
    consecutive groups of nodes holding about equal weight bytes."""
    nodes = list(model.graph.node)
    chosen: list[Placement] = []
    for node in nodes:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        ipu, stage = attrs.get("__ipu_number"), attrs.get("__pipeline_stage")
        chosen.append((None if ipu is None else int(ipu), None if stage is None else int(stage)))
    if any(p != (None, None) for p in chosen) or ipus <= 1:
        return chosen
    weight_bytes = np.array(
        [
            sum(model.initializers[i].nbytes for i in n.input if i in model.initializers)
            for n in nodes
        ],
        dtype=np.float64,
    )
    weight_bytes += 1.0  # nodes without weights still spread when no node has any
    middles = (np.cumsum(weight_bytes) - weight_bytes / 2) / weight_bytes.sum()
    groups = np.minimum((middles * ipus).astype(int), ipus - 1)
    groups = np.maximum.accumulate(groups)
    return [(int(g), int(g) if pipelined else None) for g in groups]


@contextlib.contextmanager
def _placed(where: Placement) -> Iterator[None]:
    ipu, stage = where
    if stage is not None:
        with pipeline_stage(stage, ipu):
            yield
    elif ipu is not None:
        with shard(ipu):
            yield
    else:
        yield


class Weights:
    """Host float arrays of more than one element that meet a device op become weights: a
    variable written once, named by its ONNX value, shared by every node using it the same
    way. A lowering may hand in a view of the value (a Gemm's transposed B, a Conv's kernel
    as [KH, KW, C, F]); another view of the same value is a weight of its own."""

    def __init__(self) -> None:
        self.made: dict[tuple, TracedTensor] = {}
        self.views: dict[str, int] = {}  # views of each value made so far

    def __call__(self, name: str, value: Any) -> Any:
        if traced(value) or value is None:
            return value
        array = np.asarray(value)
        if array.dtype.kind != "f" or array.size <= 1:
            return value
        key = (name, array.shape, array.strides)
        if key not in self.made:
            trace = current_trace()
            if trace is None:
                return value
            kind = float_type()
            seen = self.views.get(name, 0)
            self.views[name] = seen + 1
            # the model's own array (or a view of it, such as a transposed kernel) when it
            # is already of the type computed in: weights are held once on the host
            param = name if seen == 0 else f"{name}/view{seen}"
            node = trace.param(param, np.asarray(array, kind.numpy_dtype), kind)
            self.made[key] = TracedTensor(trace, node)
        return self.made[key]


def lower_graph(
    model: OnnxModel, env: dict[str, Any], where: list[Placement] | None = None
) -> dict[str, Any]:
    """Lower every node of ``model`` on ``env`` (inputs and initializers by name); returns
    ``env`` with every value the nodes computed."""
    weights = Weights()
    for index, node in enumerate(model.graph.node):
        ctx = node_context(node, index, model.opset, model.source, model.value_types)
        registered = find_lowering(ctx)
        args = []
        for name in node.input:
            if name and name not in env:
                raise ctx.error(f"input {name!r} is not computed before this node")
            args.append(env[name] if name else None)
        while args and args[-1] is None:
            args.pop()
        ctx.weight = weights
        placement = where[index] if where else (None, None)
        # a node's ops are attributed to "model.onnx:<node number>", not the caller's line
        where_from = source_location((model.source, index + 1))
        trace = current_trace()
        first = len(trace.nodes) if trace is not None else 0
        scope = FrameworkScope(node_scope(node, index), f"onnx::{node.op_type}")
        with name_scope(LAYER), name_scope(scope), where_from, _placed(placement):
            if traced(*args) and not registered.host_weights:
                args = [weights(n, a) for n, a in zip(node.input, args, strict=False)]
            result = _call(ctx, registered.fn, args)
        _node_memory_proportion(ctx, node, trace, first)
        outputs = result if isinstance(result, list | tuple) else [result]
        for name, value in zip(node.output, outputs, strict=False):
            if name:
                env[name] = value
    return env


def _node_memory_proportion(ctx: Any, node: onnx.NodeProto, trace: Any, first: int) -> None:
    """PopART's ``__available_memory_proportion`` node attribute: the matmul / convolution
    plans the node made may use that share of a tile for temporaries."""
    attr = next((a for a in node.attribute if a.name == MEMORY_ATTRIBUTE), None)
    if attr is None or trace is None:
        return
    value = onnx.helper.get_attribute_value(attr)
    try:
        apply_proportion_since(trace, first, value, f"attribute {MEMORY_ATTRIBUTE}")
    except OptionError as exc:
        raise ctx.error(str(exc)) from None


def _call(ctx: Any, fn: Any, args: list[Any]) -> Any:
    try:
        return fn(ctx, *args)
    except OnnxError:
        raise
    except TypeError as exc:  # wrong arity: the node has inputs the operator does not take
        raise ctx.error(f"cannot be lowered with these inputs: {exc}") from None
    except Exception as exc:
        if isinstance(exc, ArithmeticError | ValueError | IndexError) or type(
            exc
        ).__module__.startswith("ipu_engine"):
            raise ctx.error(str(exc)) from None
        raise
