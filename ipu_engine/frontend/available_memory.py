"""availableMemoryProportion from the front-end, as PopTorch sets it: per op
(``ops.set_available_memory(tensor, 0.2)``, like ``poptorch.set_available_memory``: the
matmul that produced ``tensor``) and for the whole model (``Options(
available_memory_proportion=0.3)`` or ``{"IPU0": 0.3, "IPU1": 0.5}``, like
``options.setAvailableMemoryProportion``). The per-op value wins.

Both travel as the traced node's attribute ``available_memory_proportion`` (``ATTR``),
which the graph builder hands to poplin as its ``availableMemoryProportion`` option. An
importer that makes nodes itself (ONNX, with PopART's ``__available_memory_proportion``
node attribute) sets the same attribute.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ipu_engine.common.errors import GraphError, OptionError
from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.frontend.traced import TracedTensor, user_line

ATTR = "available_memory_proportion"
#: ops whose plan the proportion changes: matmuls (plain and batched) and convolutions
PLANNED_OPS = frozenset({"matmul", "matmul_batched", "conv", "conv_transpose", "lstm", "gru"})
VIEW_OPS = frozenset({"reshape", "transpose", "slice"})  # views of a result, not new ops
_IPU_KEY = re.compile(r"IPU(\d+)")


def check_proportion(value: Any, what: str) -> float:
    """``value`` as a float in (0, 1], else an OptionError naming ``what``."""
    number = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    if not 0 < number <= 1:  # NaN fails too
        raise OptionError(
            f"{what} must be a number in (0, 1] (the share of a tile's memory a matmul or "
            f"convolution plan may use for temporaries), got {value!r}"
        )
    return number


def check_model_proportion(value: Any) -> None:
    """The Options field: None, a proportion for every IPU, or {"IPU<n>": proportion}."""
    what = "option 'available_memory_proportion'"
    if value is None:
        return
    if not isinstance(value, Mapping):
        check_proportion(value, what)
        return
    for key, proportion in value.items():
        if not isinstance(key, str) or not _IPU_KEY.fullmatch(key):
            raise OptionError(
                f"{what}: key {key!r} names no IPU; use 'IPU0', 'IPU1', ... as PopTorch's "
                "setAvailableMemoryProportion does"
            )
        check_proportion(proportion, f"{what}[{key!r}]")


def model_proportion(value: float | Mapping[str, float] | None, ipu: int) -> float | None:
    """The Options value for the replica's IPU ``ipu`` (None: poplin's default)."""
    if value is None or not isinstance(value, Mapping):
        return value
    return value.get(f"IPU{ipu}")


def set_available_memory(tensor: TracedTensor, proportion: float) -> TracedTensor:
    """Plan the matmul that produced ``tensor`` within ``proportion`` of a tile's memory
    for its temporaries; returns ``tensor``, as ``poptorch.set_available_memory`` does.

    Views of the result (reshape, transpose, slice) and a bias added to it (a Linear
    layer's ``x @ w + b``) are looked through to the matmul.
    """
    if not isinstance(tensor, TracedTensor):
        raise GraphError(
            f"{user_line()}: set_available_memory takes a traced tensor (a matmul's result), "
            f"not {type(tensor).__name__}"
        )
    value = check_proportion(proportion, f"{user_line()}: set_available_memory: proportion")
    node = _planned_op(tensor.node)
    if node is None:
        raise GraphError(
            f"{user_line()}: set_available_memory: {tensor.node.describe()} is made by "
            f"{tensor.node.op!r}, not by a matmul; call it on a matmul's result"
        )
    node.attrs[ATTR] = value
    return tensor


def _planned_op(node: Node) -> Node | None:
    while node.op in VIEW_OPS:
        node = node.inputs[0]
    if node.op == "add":  # a bias: the matmul's result plus a weight or constant
        planned = [i for i in node.inputs if i.op in PLANNED_OPS]
        others = [i for i in node.inputs if i.op in ("param", "const")]
        if len(planned) == 1 and len(others) == 1:
            node = planned[0]
    return node if node.op in PLANNED_OPS else None


def apply_proportion_since(trace: Trace, first: int, proportion: Any, what: str) -> None:
    """Give the planned ops traced since node ``first`` ``proportion`` (an importer's per-node
    attribute, such as PopART's ``__available_memory_proportion``)."""
    value = check_proportion(proportion, what)
    for node in trace.nodes[first:]:
        if node.op in PLANNED_OPS:
            node.attrs[ATTR] = value


def apply_model_proportion(trace: Trace, value: float | Mapping[str, float] | None) -> None:
    """Give every planned op without a per-op proportion the model's for its IPU."""
    for node in trace.nodes:
        if node.op in PLANNED_OPS and ATTR not in node.attrs:
            proportion = model_proportion(value, node.shard)
            if proportion is not None:
                node.attrs[ATTR] = proportion


def poplin_options(node: Node) -> dict[str, float] | None:
    """The poplin options of a planned op's node (None: poplin's defaults)."""
    if ATTR not in node.attrs:
        return None
    return {
        "availableMemoryProportion": check_proportion(
            node.attrs[ATTR], f"{node.where()}: {node.op} attribute {ATTR}"
        )
    }
