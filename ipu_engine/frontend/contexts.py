"""Debug contexts for the steps the framework adds around the library ops: host feeds, copies
between IPUs, the gradient all-reduce and the pipeline's time steps.

Each is named as PopLibs names its ops (``host::infeed``, ``pipeline::steadyState``). The
feeds, the copies and the all-reduce are operations of their own, so Operations gives their
cycles to what the framework did instead of leaving them without an op ("(none)"); they and
the pipeline's time steps are also the phases the model's ops run in (the analyses find a
step's phase on the program tree): a time step is only a phase, never the op of the ops
inside it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ipu_engine.poplar.debug import name_scope
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import If, Program, Repeat, RepeatWhileTrue, Sequence

HOST_LAYER = "host"  # the layer of the feeds: what crosses the host link
PIPELINE_LAYER = "pipeline"  # the layer of the pipeline's time steps
INFEED = "host::infeed"
OUTFEED = "host::outfeed"
IPU_COPY = "ipu_engine::ipuCopy"
ALL_REDUCE = "gcl::allReduce"


def pipeline_op(time_step_label: str) -> str:
    """``pipeline::rampUp`` / ``pipeline::steadyState`` / ``pipeline::rampDown`` for a time
    step labelled ``rampUp0``, ``steadyState``, ``rampDown1``."""
    phase = time_step_label.rstrip("0123456789") or time_step_label
    return f"pipeline::{phase}"


def framework_op(
    graph: Graph, op: str, name: str, args: dict[str, Any] | None = None, layer: str = ""
) -> int:
    """A new debug context for a framework step: op ``op``, called ``name``, in ``layer``
    (the layer Operations groups it under, when it is not inside one of the model's)."""
    with name_scope(layer) if layer else contextlib.nullcontext():
        return graph.debug.add(name, api=op, args=args, op=op)


@contextlib.contextmanager
def framework_op_scope(graph: Graph, op: str, name: str, layer: str) -> Iterator[int]:
    """What is created inside (a stream, its copies) belongs to framework op ``op``."""
    with name_scope(layer), graph.debug.op(op, name) as context:
        yield context


def attribute(program: Program, debug_id: int) -> Program:
    """``program`` and every program inside it that has no context of its own belong to
    ``debug_id`` (Executes keep their compute set's context)."""
    for p in _walk(program):
        if p.debug_id < 0:
            p.debug_id = debug_id
    return program


def _walk(program: Program) -> Iterator[Program]:
    yield program
    if isinstance(program, Sequence):
        for p in program.programs:
            yield from _walk(p)
    elif isinstance(program, Repeat):
        yield from _walk(program.body)
    elif isinstance(program, RepeatWhileTrue):
        yield from _walk(program.cond)
        yield from _walk(program.body)
    elif isinstance(program, If):
        yield from _walk(program.then)
        yield from _walk(program.else_)
