"""A change applied to a traced program's nodes before it is built again: a planned op's
``available_memory_proportion`` attribute, weights made half (and the ops reading them
computing in half), the ops split over more IPUs, or a layer moved to another pipeline
stage. Operations and layers are found by the names the report shows (the op call's debug
name: its scopes and the node's name)."""

from __future__ import annotations

import numpy as np

from ipu_engine.common.types import FLOAT, HALF
from ipu_engine.frontend.available_memory import ATTR, PLANNED_OPS
from ipu_engine.frontend.ir import SOURCE_OPS, Node, Trace
from ipu_engine.onnx.lowering.walk import balanced_groups
from ipu_engine.poplar.debug import FrameworkScope
from ipu_engine.replan.changes import AMP, IPUS, STAGE, TYPE, Change
from ipu_engine.replan.decode import ReplanError

#: ops that compute in the type of the weights they read when those are made half
WEIGHT_READERS = frozenset({"matmul", "matmul_batched", "conv", "gather"})


def names_of(node: Node) -> set[str]:
    """The names a report may give ``node``'s operation: its op call (scopes and name)
    and the framework op or layer it is part of (its scopes)."""
    scope = [str(s) for s in node.scope]
    found = {"/".join([*scope, node.name])}
    for end in range(1, len(scope) + 1):
        found.add("/".join(scope[:end]))
    return found


def _matches(node: Node, operation: str) -> bool:
    return any(n == operation or n.endswith(f"/{operation}") for n in names_of(node))


def unit_of(node: Node) -> str:
    """The layer or framework op a node belongs to: its first framework scope (an ONNX
    node), else its outermost scope, else its own name."""
    for scope in node.scope:
        if isinstance(scope, FrameworkScope):
            return str(scope)
    return str(node.scope[0]) if node.scope else node.name


def apply_framework_change(trace: Trace, change: Change) -> None:
    """Change ``trace``'s nodes in place; a change naming nothing is a ``ReplanError``."""
    if change.option == AMP:
        planned = [n for n in trace.nodes if n.op in PLANNED_OPS and _matches(n, change.operation)]
        if not planned:
            raise ReplanError(
                f"the program has no matmul or convolution called {change.operation!r}"
            )
        for node in planned:
            node.attrs[ATTR] = float(change.value)
    elif change.option == TYPE:
        make_half(trace, set(change.tensors))
    elif change.option == IPUS:
        split_over_ipus(trace, int(change.value))
    elif change.option == STAGE:
        move_to_stage(trace, change.operation, int(change.value))


def _weights_named(trace: Trace, names: set[str]) -> list[Node]:
    found = []
    for key, node in trace.params.items():
        if key in names or node.name in names or any(n.endswith(f"/{node.name}") for n in names):
            found.append(node)
    return found


def make_half(trace: Trace, names: set[str]) -> None:
    """The weights ``names`` stored in half and every op reading one computing in half;
    other ops compute in half when all their computed float operands are half (a constant
    or another weight they read follows them), else in float32 with their half operands
    cast up."""
    weights = _weights_named(trace, names)
    if not weights:
        raise ReplanError(f"the program has no weight among {sorted(names)[:3]}")
    for weight in weights:
        weight.type = HALF
        value = weight.attrs.get("value")
        if isinstance(value, np.ndarray):
            weight.attrs["value"] = value.astype(np.float16)
    halves = {w.id for w in weights}
    out: list[Node] = []
    for node in trace.nodes:
        floats = [i for i in node.inputs if i.type.is_float]
        if node.op in SOURCE_OPS or not floats or not node.type.is_float:
            out.append(node)
            continue
        reads_weight = node.op in WEIGHT_READERS and any(i.id in halves for i in node.inputs)
        computed = [i for i in floats if i.op not in ("const", "param")]
        in_half = reads_weight or (computed and all(i.type == HALF for i in computed))
        want = HALF if in_half else FLOAT
        if node.op == "cast":
            out.append(node)
            continue
        inputs = []
        for i in node.inputs:
            if (
                i.type.is_float
                and i.type != want
                and i.op in ("const", "param")
                and (i.id not in halves)
            ):
                # a constant or a small weight (a batch norm's scale) follows the values it
                # meets, as PopART's half conversion makes it: no casts around every op (a
                # weight the change made half stays half: an op reading it in float, such as
                # the backward pass's transpose, casts it up)
                i.type = want
                if isinstance(i.attrs.get("value"), np.ndarray):
                    i.attrs["value"] = i.attrs["value"].astype(want.numpy_dtype)
            elif i.type.is_float and i.type != want:
                i = _cast(trace, i, want, node, out)
            inputs.append(i)
        node.inputs, node.type = tuple(inputs), want
        out.append(node)
    for index, node in enumerate(out):
        node.id = index
    trace.nodes = out


def _cast(trace: Trace, value: Node, to: object, user: Node, out: list[Node]) -> Node:
    cast = Node(
        -1, "cast", (value,), value.shape, to, {"type": to}, user.shard, user.stage,
        user.scope, user.location, f"{value.name}/cast",
    )  # fmt: skip
    out.append(cast)
    return cast


def _units(trace: Trace) -> list[str]:
    """The layers or framework ops of the program, in the order their first op runs."""
    seen: dict[str, None] = {}
    for node in trace.nodes:
        if node.op not in SOURCE_OPS:
            seen.setdefault(unit_of(node), None)
    return list(seen)


def split_over_ipus(trace: Trace, ipus: int) -> None:
    """The layers in ``ipus`` consecutive groups of about equal weight bytes, one group per
    IPU: shards, or pipeline stages when the program is pipelined."""
    units = _units(trace)
    if ipus > len(units):
        raise ReplanError(
            f"the program has {len(units)} layers: it cannot be split over {ipus} IPUs"
        )
    weight = dict.fromkeys(units, 1)
    users = trace.consumers()
    for param in trace.params.values():
        first = users.get(param.id)
        if first:
            weight[unit_of(first[0])] += param.size * param.type.size
    groups = balanced_groups(np.array([weight[u] for u in units], dtype=np.int64), ipus)
    group_of = dict(zip(units, groups.tolist(), strict=True))
    pipelined = any(n.stage >= 0 for n in trace.nodes if n.op not in SOURCE_OPS)
    for node in trace.nodes:
        if node.op in SOURCE_OPS:
            continue
        node.shard = group_of[unit_of(node)]
        if pipelined:
            node.stage = node.shard
    for param in trace.params.values():
        first = users.get(param.id)
        param.shard = first[0].shard if first else 0


def move_to_stage(trace: Trace, layer: str, stage: int) -> None:
    """Every op of ``layer`` (its forward and backward) into pipeline ``stage``, on that
    stage's IPU; data must still flow to later stages only."""
    ops = [n for n in trace.nodes if n.op not in SOURCE_OPS]
    moved = [n for n in ops if unit_of(n) == layer or _matches(n, layer)]
    if not moved:
        raise ReplanError(f"the program has no layer called {layer!r}")
    if not any(n.stage >= 0 for n in ops):
        raise ReplanError("the program is not pipelined: it has no stages to move a layer to")
    homes = {n.stage: n.shard for n in reversed(ops) if n not in moved}
    if stage not in homes:
        raise ReplanError(f"the program has no pipeline stage {stage} (stages: {sorted(homes)})")
    for node in moved:
        node.stage, node.shard = stage, homes[stage]
