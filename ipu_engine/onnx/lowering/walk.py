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

from ipu_engine.common.errors import OnnxError, OptionError
from ipu_engine.frontend.available_memory import apply_proportion_since
from ipu_engine.frontend.ir import current_trace, pipeline_stage, shard
from ipu_engine.frontend.traced import TracedTensor
from ipu_engine.onnx.lowering import (  # noqa: F401 - each registers its lowerings
    conv,
    elementwise,
    linalg,
    nn,
    resize,
    rnn,
    scatter,
    shape,
)
from ipu_engine.onnx.lowering.common import float_type, traced
from ipu_engine.onnx.lowering.registry import REGISTRY, find_lowering, node_context
from ipu_engine.onnx.model import OnnxModel
from ipu_engine.onnx.node_origin import node_origin
from ipu_engine.poplar.debug import FrameworkScope, name_scope, source_location

LAYER = "ONNX"  # the layer Operations and Insights show the model's nodes under
MEMORY_ATTRIBUTE = "__available_memory_proportion"  # PopART's, per node
Placement = tuple[int | None, int | None]  # (shard, pipeline stage) of a node


def check_supported(model: OnnxModel) -> None:
    """Every node has a lowering at the model's opset: refused before anything is built."""
    for index, node in enumerate(model.graph.node):
        find_lowering(node_context(node, index, model.opset, model.source, model.value_types))


def host_fed_inputs(model: OnnxModel) -> dict[str, str]:
    """The model inputs a node reads where its lowering needs a value known when the model
    compiles (Resize's scales and sizes fed as inputs, as ONNX's node tests feed them),
    each with the first such node's name: they become part of the program's signature."""
    found: dict[str, str] = {}
    inputs = {spec.name for spec in model.inputs}
    for index, node in enumerate(model.graph.node):
        registered = REGISTRY.get(node.op_type)
        for position in registered.host_inputs if registered else ():
            if position < len(node.input) and node.input[position] in inputs:
                found.setdefault(node.input[position], node.name or f"{node.op_type}_{index}")
    return found


def node_scope(node: onnx.NodeProto, index: int) -> str:
    """The node's name scope: its name (with its op type when the name lacks it, without
    the ``node_`` torch's exporter puts before every name), '/'-free."""
    name = node.name.replace("/", ".").strip(".") or f"{node.op_type}_{index}"
    name = name.removeprefix("node_") or name
    return name if node.op_type in name else f"{node.op_type}_{name}"


def placements(model: OnnxModel, ipus: int, pipelined: bool) -> list[Placement]:
    """Each node's (shard, stage): PopART's attributes when the model has them, else ``ipus``
    consecutive groups of the nodes computed on the IPU whose largest weight bytes
    (``weight_bytes``) are least; a node folded on the host goes with the node before it."""
    nodes = list(model.graph.node)
    chosen: list[Placement] = []
    for node in nodes:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        ipu, stage = attrs.get("__ipu_number"), attrs.get("__pipeline_stage")
        chosen.append((None if ipu is None else int(ipu), None if stage is None else int(stage)))
    if any(p != (None, None) for p in chosen) or ipus <= 1:
        return chosen
    weights, on_device = weight_bytes(model)
    if not on_device.any():
        return chosen
    # a byte more per node: nodes without weights still spread when no node has any
    device_groups = balanced_groups(weights[on_device] + 1, ipus)
    groups = np.full(len(nodes), -1, dtype=np.int64)
    groups[on_device] = device_groups
    groups = np.maximum.accumulate(np.maximum(groups, 0))
    return [(int(g), int(g) if pipelined else None) for g in groups]


def balanced_groups(sizes: np.ndarray, parts: int) -> np.ndarray:
    """The group of each item of ``sizes`` (> 0) in ``parts`` consecutive non-empty groups
    (as many as there are items, if fewer) whose largest total is least: the least capacity
    that filling each group in turn up to it covers, found by bisection."""
    sizes = np.asarray(sizes, dtype=np.int64)
    count, parts = sizes.size, min(parts, sizes.size)
    ends = np.cumsum(sizes)

    def fill(capacity: int) -> np.ndarray | None:
        groups = np.empty(count, dtype=np.int64)
        start, base = 0, 0
        for group in range(parts):
            end = int(np.searchsorted(ends, base + capacity, side="right"))
            # leave an item for each group after this one; the last takes the rest
            end = (
                count
                if group == parts - 1
                else min(max(end, start + 1), count - (parts - group - 1))
            )
            if int(ends[end - 1]) - base > capacity:
                return None
            groups[start:end] = group
            start, base = end, int(ends[end - 1])
        return groups

    low, high = int(sizes.max()), int(ends[-1])
    while low < high:
        middle = (low + high) // 2
        if fill(middle) is None:
            low = middle + 1
        else:
            high = middle
    found = fill(low)
    assert found is not None  # the whole total always fits
    return found


def weight_bytes(model: OnnxModel) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of weights each node places on its IPU, and whether it computes on the IPU
    at all (a node whose inputs are all known on the host is folded there). A weight is a
    float value known on the host of more than one element -- an initializer, or what
    nodes compute from host values alone (Constant, ConstantOfShape: VGG-19's weights are
    made that way) -- counted at its first reader on the IPU, where it becomes a variable."""
    sizes = {name: (a.size, a.dtype) for name, a in model.initializers.items()}
    for v in model.graph.value_info:
        dims = v.type.tensor_type.shape.dim
        if v.type.HasField("tensor_type") and all(d.HasField("dim_value") for d in dims):
            elem = onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)
            sizes[v.name] = (int(np.prod([d.dim_value for d in dims], dtype=np.int64)), elem)
    host = set(model.initializers)
    counted: set[str] = set()
    weights = np.zeros(len(model.graph.node), dtype=np.int64)
    on_device = np.zeros(len(model.graph.node), dtype=bool)
    for index, node in enumerate(model.graph.node):
        inputs = [name for name in node.input if name]
        if all(name in host for name in inputs):  # folded on the host
            host.update(name for name in node.output if name)
            continue
        on_device[index] = True
        for name in inputs:
            size, dtype = sizes.get(name, (0, np.dtype(np.int64)))
            if name in host and name not in counted and np.dtype(dtype).kind == "f" and size > 1:
                counted.add(name)
                weights[index] += size * float_type().size
    return weights, on_device


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
        # a node's ops are attributed to the exporter's Python line when the node records
        # it, else to "model.onnx:<node number>" (never the caller's line); they are named
        # in the module scopes it was exported from
        origin = node_origin(node)
        where_from = source_location(origin.location or (model.source, index + 1))
        trace = current_trace()
        first = len(trace.nodes) if trace is not None else 0
        scope = FrameworkScope(node_scope(node, index), f"onnx::{node.op_type}", origin.args)
        with contextlib.ExitStack() as scopes:
            for name in (LAYER, *origin.modules, scope):
                scopes.enter_context(name_scope(name))
            scopes.enter_context(where_from)
            scopes.enter_context(_placed(placement))
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
