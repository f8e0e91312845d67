"""The traced program: one node per op recorded while a Python function runs on placeholders.

A node holds its operands, result shape and element type, and where it was asked for:
the shard (IPU) and pipeline stage in force, the name scopes, and the user's file and
line -- so a graph built from it later places, names and blames each op correctly.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ipu_engine.common.errors import GraphError, ShardError
from ipu_engine.common.types import Type
from ipu_engine.frontend.naming import LayerNames
from ipu_engine.poplar.debug import caller_location, current_scopes

_state = threading.local()

#: Ops whose value needs no step of the program: inputs, weights, constants.
SOURCE_OPS = frozenset({"input", "param", "const"})


@dataclass(eq=False)
class Node:
    """One traced op: ``op`` applied to ``inputs`` gives a ``type[shape]`` value."""

    id: int
    op: str
    inputs: tuple[Node, ...]
    shape: tuple[int, ...]
    type: Type
    attrs: dict[str, Any]
    shard: int
    stage: int  # pipeline stage, -1 outside any
    scope: tuple[str, ...]
    location: tuple[str, int]
    name: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def describe(self) -> str:
        """``float[3,4]``: how error messages show a value."""
        return f"{self.type.name}[{','.join(str(d) for d in self.shape)}]"

    def where(self) -> str:
        return where(self.location)


def where(location: tuple[str, int]) -> str:
    """``model.py:12``: the user's file and line, as compilers print them."""
    path, line = location
    return f"{os.path.basename(path) or '<unknown>'}:{line}"


@dataclass
class TapeEntry:
    """A layer's forward call, kept so that its backward runs with the same placement."""

    layer: Any
    saved: Any
    inputs: tuple[Node, ...]
    output: Node
    shard: int | None
    stage: int | None


@dataclass
class Trace:
    """The nodes of one traced function, in the order its ops ran."""

    ipus_per_replica: int | None = None  # known when the target is given up front
    target_text: str = ""
    pipelined_blocks: bool = True  # layers' blocks become pipeline stages (else shards)
    partials_type: str = "float"  # what half matmul products accumulate in, by default
    #: host float constants take the float type of the tensor they meet (an imported model
    #: computed in half: its float32 constants must not promote the half values to float32)
    host_floats_follow: bool = False
    #: weights are made in the layout of the matmul reading them (PopART's way with an ONNX
    #: model's initializers), not spread linearly
    weights_in_op_layout: bool = False
    nodes: list[Node] = field(default_factory=list)
    inputs: list[Node] = field(default_factory=list)
    params: dict[str, Node] = field(default_factory=dict)
    tape: list[TapeEntry] = field(default_factory=list)
    layer_names: LayerNames = field(default_factory=LayerNames)

    def add(
        self,
        op: str,
        inputs: tuple[Node, ...],
        shape: tuple[int, ...],
        elem_type: Type,
        attrs: dict[str, Any] | None = None,
        name: str = "",
        location: tuple[str, int] | None = None,
    ) -> Node:
        shard, stage = _placement(inputs)
        node = Node(
            len(self.nodes),
            op,
            inputs,
            tuple(int(d) for d in shape),
            elem_type,
            dict(attrs or {}),
            shard,
            stage,
            current_scopes(),
            location or caller_location(),
            name or op,
        )
        self.nodes.append(node)
        return node

    def input(self, shape: tuple[int, ...], elem_type: Type, name: str) -> Node:
        node = self.add("input", (), shape, elem_type, {"index": len(self.inputs)}, name)
        node.stage = 0 if node.stage < 0 else node.stage
        self.inputs.append(node)
        return node

    def param(self, name: str, value: np.ndarray, elem_type: Type) -> Node:
        """The weight called ``name``: one node however often the same array is used. A
        second array under the same name would silently share the first one's weight."""
        node = self.params.get(name)
        if node is None:
            node = self.add("param", (), value.shape, elem_type, {"value": value}, name)
            self.params[name] = node
        elif node.attrs["value"] is not value:
            raise GraphError(
                f"{where(caller_location())}: two different weights are called {name!r} (the "
                f"first from {node.where()}); they would share one value. Give their layers "
                "different names"
            )
        return node

    def weights(self) -> dict[str, np.ndarray]:
        """Every weight by its name, as the host arrays the model holds."""
        return {name: node.attrs["value"] for name, node in self.params.items()}

    def consumers(self) -> dict[int, list[Node]]:
        users: dict[int, list[Node]] = {}
        for node in self.nodes:
            for i in node.inputs:
                users.setdefault(i.id, []).append(node)
        return users

    def check_shard(self, shard: int, location: tuple[str, int]) -> None:
        limit = self.ipus_per_replica
        if limit is not None and shard >= limit:
            raise ShardError(
                f"{where(location)}: {shard_limit_text(shard, limit, self.target_text)}"
            )


def shard_limit_text(shard: int, limit: int, target_text: str) -> str:
    ipus = f"{limit} IPU{'s' if limit != 1 else ''}"
    return (
        f"shard {shard} is beyond the target's IPUs: {target_text or 'the target'} has "
        f"{ipus} (shards 0..{limit - 1})"
    )


def current_trace() -> Trace | None:
    return getattr(_state, "trace", None)


@contextlib.contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    """Record the ops run inside into ``trace``; placement starts on shard 0."""
    outer = (current_trace(), getattr(_state, "shard", None), getattr(_state, "stage", None))
    _state.trace, _state.shard, _state.stage = trace, None, None
    try:
        yield trace
    finally:
        _state.trace, _state.shard, _state.stage = outer


def _check_index(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ShardError(
            f"{where(caller_location())}: {what} must be an integer >= 0, got {value!r}"
        )
    return int(value)


@contextlib.contextmanager
def placed(shard: int | None, stage: int | None) -> Iterator[None]:
    outer = (getattr(_state, "shard", None), getattr(_state, "stage", None))
    _state.shard = shard if shard is not None else outer[0]
    _state.stage = stage if stage is not None else outer[1]
    try:
        yield
    finally:
        _state.shard, _state.stage = outer


def shard(index: int) -> contextlib.AbstractContextManager[None]:
    """``with shard(i):`` -- the ops traced inside run on IPU ``i`` (of their replica)."""
    index = _check_index(index, "a shard index")
    trace = current_trace()
    if trace is not None:
        trace.check_shard(index, caller_location())
    return placed(index, None)


def pipeline_stage(stage: int, ipu: int | None = None) -> contextlib.AbstractContextManager[None]:
    """``with pipeline_stage(k):`` -- the ops inside form pipeline stage ``k``, on IPU ``ipu``
    (default ``k``), as PopTorch's ``BeginBlock``. Stages overlap over micro-batches."""
    stage = _check_index(stage, "a pipeline stage")
    ipu = stage if ipu is None else _check_index(ipu, "a pipeline stage's IPU")
    trace = current_trace()
    if trace is not None:
        trace.check_shard(ipu, caller_location())
    return placed(ipu, stage)


def current_placement() -> tuple[int | None, int | None]:
    """The (shard, stage) chosen by the enclosing contexts, None where none is."""
    return getattr(_state, "shard", None), getattr(_state, "stage", None)


def _placement(inputs: tuple[Node, ...]) -> tuple[int, int]:
    """Explicit contexts win; otherwise an op follows its latest-stage operand (so code
    after a pipeline stage stays in it), and plain code runs on shard 0."""
    shard, stage = current_placement()
    if stage is None:
        staged = [i for i in inputs if i.stage >= 0 and i.op not in SOURCE_OPS]
        if staged:
            latest = max(staged, key=lambda n: n.stage)
            stage = latest.stage
            shard = latest.shard if shard is None else shard
    return (0 if shard is None else shard), (-1 if stage is None else stage)
