"""A framework program's record for ``autoReport.outputSerializedGraph``: its traced IR
(nodes, ops, attributes, shapes, weights' shapes, stages, IPUs), the options it was built
with and, for training, the loss, gradients and optimizer -- what ``ipu_engine.replan``
rebuilds the same graph from, with one change. Weights are kept as shapes only; small
constants (``MAX_CONSTANT_ELEMENTS``) with their values, larger ones as shapes.

A node is a row: ``[id, op, inputs, shape, type, attrs, shard, stage, scope, file, line,
name]``; a scope entry is a name, or ``[name, op]`` for a framework op (an ONNX node).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.frontend.options import Options
from ipu_engine.poplar.debug import FrameworkScope
from ipu_engine.poplar.journal_codec import ValueEncoder

RECORD_KIND = "framework"
MAX_CONSTANT_ELEMENTS = 4096
#: Options fields that decide the graph (not where reports or caches go)
OPTION_FIELDS = (
    "ipu_version", "num_ipus", "tiles_per_ipu", "device_iterations", "replication_factor",
    "gradient_accumulation", "execution_strategy", "partials_type", "available_memory_proportion",
)  # fmt: skip
TRACE_FLAGS = (
    "ipus_per_replica", "target_text", "pipelined_blocks", "partials_type",
    "host_floats_follow", "weights_in_op_layout",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Training:
    """What a training program adds to its trace: the loss and gradient nodes, where the
    loss starts, and the optimizer's learning rate (SGD)."""

    loss: Node
    grads: Mapping[str, Node]
    loss_from: int
    lr: float


def _attr(encoder: ValueEncoder, node: Node, key: str, value: Any) -> Any:
    where = f"node {node.id} ({node.op} {node.name!r}): attribute {key}"
    if key == "value" and isinstance(value, np.ndarray):
        if node.op == "const" and value.size <= MAX_CONSTANT_ELEMENTS:
            return encoder.array(np.ascontiguousarray(value), where)
        return {"$zeros": [value.dtype.str, list(value.shape)]}  # a weight: its shape only
    return encoder.value(value, where)


def _scope(entry: str) -> Any:
    return [str(entry), entry.op] if isinstance(entry, FrameworkScope) else str(entry)


def trace_record(
    trace: Trace,
    outputs: list[Node],
    single: bool,
    program: str,
    name: str,
    options: Options,
    instrument: bool,
    training: Training | None = None,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The record (see the module) and its arrays."""
    encoder = ValueEncoder()
    nodes = [
        [
            n.id,
            n.op,
            [i.id for i in n.inputs],
            list(n.shape),
            n.type.name,
            {k: _attr(encoder, n, k, v) for k, v in n.attrs.items()},
            n.shard,
            n.stage,
            [_scope(s) for s in n.scope],
            str(n.location[0]),
            int(n.location[1]),
            n.name,
        ]
        for n in trace.nodes
    ]
    record: dict[str, Any] = {
        "kind": RECORD_KIND,
        "program": program,
        "name": name,
        "options": {f: encoder.value(getattr(options, f), f"option {f}") for f in OPTION_FIELDS},
        "instrument": bool(instrument),
        "trace": {
            **{f: getattr(trace, f) for f in TRACE_FLAGS},
            "nodes": nodes,
            "inputs": [n.id for n in trace.inputs],
            "params": [[k, n.id] for k, n in trace.params.items()],
        },
        "outputs": [n.id for n in outputs],
        "single": bool(single),
        "training": None
        if training is None
        else {
            "loss": training.loss.id,
            "grads": [[k, n.id] for k, n in training.grads.items()],
            "loss_from": training.loss_from,
            "optimizer": {"kind": "SGD", "lr": float(training.lr)},
        },
    }
    record["problems"] = list(dict.fromkeys(encoder.problems))
    return record, encoder.arrays
