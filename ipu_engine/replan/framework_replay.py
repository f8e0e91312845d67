"""Replaying a framework program's record -- its traced IR -- with one change: the graph
is built from the nodes by the front end's own builders (``build_program``,
``build_training_program``), as the program built it, but never loaded or run."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ipu_engine.common.errors import EngineError
from ipu_engine.common.types import as_type
from ipu_engine.frontend.api import TracedFunction, build_program, ipus_used
from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.frontend.optim import SGD
from ipu_engine.frontend.options import Options
from ipu_engine.frontend.training import build_training_program
from ipu_engine.frontend.training_program import TracedTraining
from ipu_engine.poplar.debug import FrameworkScope
from ipu_engine.replan.changes import Change
from ipu_engine.replan.decode import Decoder, ReplanError
from ipu_engine.replan.framework_changes import apply_framework_change
from ipu_engine.replan.poplar_replay import Replayed

TRACE_FLAGS = (
    "ipus_per_replica", "target_text", "pipelined_blocks", "partials_type",
    "host_floats_follow", "weights_in_op_layout",
)  # fmt: skip


def _scope(entry: Any, where: str) -> str:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, list) and len(entry) == 2 and all(isinstance(e, str) for e in entry):
        return FrameworkScope(entry[0], entry[1])
    raise ReplanError(f"{where}: scope entry {entry!r:.60} is not a name or [name, op]")


def decode_trace(record: dict[str, Any], arrays: dict[str, np.ndarray]) -> Trace:
    """The traced program a record holds."""
    raw = record["trace"]
    trace = Trace(**{f: raw.get(f, getattr(Trace(), f)) for f in TRACE_FLAGS})
    decoder = Decoder(arrays)
    nodes: list[Node] = []
    for row in raw["nodes"]:
        id_, op, inputs, shape, type_, attrs, shard, stage, scope, file, line, name = row
        where = f"node {id_} ({op})"
        if not (isinstance(shape, list) and isinstance(attrs, dict) and isinstance(scope, list)):
            raise ReplanError(f"{where}: its shape, attributes or scope are not lists and maps")
        try:
            elem_type = as_type(type_)
        except EngineError:
            raise ReplanError(f"{where}: element type {type_!r:.40} is unknown") from None
        node = Node(
            id_,
            op,
            tuple(nodes[i] for i in inputs),
            tuple(int(d) for d in shape),
            elem_type,
            decoder.value(attrs, where),
            int(shard),
            int(stage),
            tuple(_scope(s, where) for s in scope),
            (str(file), int(line)),
            str(name),
        )
        nodes.append(node)
    trace.nodes = nodes
    trace.inputs = [_node(nodes, i, "an input") for i in raw.get("inputs", [])]
    trace.params = {str(k): _node(nodes, i, "a weight") for k, i in raw.get("params", [])}
    return trace


def _node(nodes: list[Node], index: Any, what: str) -> Node:
    if not isinstance(index, int) or not 0 <= index < len(nodes):
        raise ReplanError(f"{what} names node {index!r:.40}, which the trace does not have")
    return nodes[index]


def _options(record: dict[str, Any], change: Change | None, trace: Trace) -> Options:
    raw = dict(Decoder({}).value(record["options"], "the options"))
    try:
        options = Options(**raw)
    except (TypeError, EngineError) as error:
        raise ReplanError(f"the record's options are not Options: {error}") from None
    if change is not None and change.option == "ipus":
        options = dataclasses.replace(options, num_ipus=change.value * options.replication_factor)
        trace.ipus_per_replica = change.value
    return options


def _in_weight_type(trace: Trace, name: str, grad: Node) -> Node:
    """A weight's gradient in the weight's type, as the front end's ``backward`` gives it
    (a weight made half by a change gets its float32 gradient cast down)."""
    weight = trace.params.get(name)
    if weight is None or weight.type == grad.type:
        return grad
    cast = Node(
        len(trace.nodes), "cast", (grad,), grad.shape, weight.type, {"type": weight.type},
        grad.shard, grad.stage, grad.scope, grad.location, f"{grad.name}/cast",
    )  # fmt: skip
    trace.nodes.append(cast)
    return cast


def replay_framework(
    record: dict[str, Any], arrays: dict[str, np.ndarray], change: Change | None
) -> Replayed:
    """The record's graph and program built again with ``change`` (None: as recorded)."""
    if record.get("problems"):
        raise ReplanError(f"the record cannot be replayed: {record['problems'][0]}")
    trace = decode_trace(record, arrays)
    outputs = [_node(trace.nodes, i, "an output") for i in record["outputs"]]
    training = record.get("training")
    loss = grads = loss_start = None
    if training is not None:
        grads = {str(k): _node(trace.nodes, i, "a gradient") for k, i in training["grads"]}
        loss = _node(trace.nodes, training["loss"], "the loss")
        loss_start = _node(trace.nodes, training["loss_from"], "the loss's first node")
    if change is not None:
        apply_framework_change(trace, change)  # may add nodes: refer to nodes, not places
    options = _options(record, change, trace)
    name = str(record.get("name") or "program")
    instrument = bool(record.get("instrument"))
    try:
        if training is None:
            traced = TracedFunction(trace, outputs, bool(record.get("single", True)))
            ipus = options.ipus_per_replica or ipus_used(traced)
            graph, built = build_program(traced, options, ipus, name)
        else:
            grads = {k: _in_weight_type(trace, k, g) for k, g in grads.items()}
            traced_training = TracedTraining(trace, loss, grads, loss_start.id)
            ipus = options.ipus_per_replica or (max((n.shard for n in trace.nodes), default=0) + 1)
            optimizer = SGD(float(training["optimizer"]["lr"]))
            graph, built = build_training_program(traced_training, optimizer, options, ipus, name)
    except EngineError as error:
        raise ReplanError(f"the changed program cannot be built: {error}") from None
    return Replayed(graph, [built.program], instrument, str(record.get("program", "")))
