"""Which ONNX operators are lowered, by what, over which opsets; and what a lowering sees of
its node (``NodeContext``: attributes, opset, output types, a way to name itself in errors).

A lowering is a function ``(ctx, *inputs) -> output | list[output]`` over numpy arrays and
traced tensors; missing optional inputs arrive as None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper

from ipu_engine.common.errors import OnnxError

Lowering = Callable[..., Any]


@dataclass(frozen=True)
class Registered:
    fn: Lowering
    since: int  # the first opset whose semantics it implements
    until: int | None  # the last, None for every later one
    host_weights: bool  # gets its float inputs as host arrays and makes weights itself
    host_inputs: tuple[int, ...] = ()  # inputs that must be known when the model compiles


REGISTRY: dict[str, Registered] = {}


def lowering(
    *op_types: str,
    since: int = 1,
    until: int | None = None,
    host_weights: bool = False,
    host_inputs: tuple[int, ...] = (),
) -> Callable:
    """Register the decorated function as the lowering of ``op_types``. Its float host
    inputs of more than one element become weights before it is called when another input
    is traced, unless ``host_weights`` (it folds them first and calls ``ctx.weight``).
    ``host_inputs``: the positions of inputs that shape the program (Resize's scales); a
    model input fed there is a value of the program's signature, not a tensor it streams."""

    def register(fn: Lowering) -> Lowering:
        for op_type in op_types:
            REGISTRY[op_type] = Registered(fn, since, until, host_weights, host_inputs)
        return fn

    return register


def supported_ops() -> list[str]:
    return sorted(REGISTRY)


@dataclass
class NodeContext:
    """One node as its lowering sees it."""

    node: onnx.NodeProto
    name: str  # the node's name, or ``<op_type>_<index>`` for an unnamed node
    opset: int
    source: str  # the model file, for messages
    out_types: list[np.dtype | None]
    attrs: dict[str, Any] = field(default_factory=dict)
    weight: Callable[[str, np.ndarray], Any] = lambda name, value: value  # set by the walker

    @property
    def op_type(self) -> str:
        return self.node.op_type

    def attr(self, key: str, default: Any = None) -> Any:
        value = self.attrs.get(key, default)
        return value.decode() if isinstance(value, bytes) else value

    def error(self, problem: str) -> OnnxError:
        return OnnxError(
            f"{self.source}: node {self.name!r} ({self.op_type}, opset {self.opset}): {problem}"
        )

    def unsupported(self, attribute: str, value: Any) -> OnnxError:
        return self.error(f"{attribute}={value!r} is not supported")


def node_context(
    node: onnx.NodeProto, index: int, opset: int, source: str, types: dict[str, np.dtype]
) -> NodeContext:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    name = node.name or f"{node.op_type}_{index}"
    out_types = [types.get(o) for o in node.output]
    return NodeContext(node, name, opset, source, out_types, attrs)


def find_lowering(ctx: NodeContext) -> Registered:
    """The lowering for ``ctx``'s op at the model's opset, or an error listing what is."""
    registered = REGISTRY.get(ctx.op_type)
    if ctx.node.domain not in ("", "ai.onnx"):
        raise ctx.error(
            f"operators of domain {ctx.node.domain!r} are not supported (only the default "
            "ONNX domain's; a model may import other domains its nodes do not use)"
        )
    if registered is None:
        raise ctx.error(
            f"operator {ctx.op_type} is not supported; supported operators: "
            f"{', '.join(supported_ops())}"
        )
    if ctx.opset < registered.since or (
        registered.until is not None and ctx.opset > registered.until
    ):
        until = registered.until if registered.until is not None else "latest"
        raise ctx.error(f"{ctx.op_type} is supported for opsets {registered.since}..{until} only")
    return registered
