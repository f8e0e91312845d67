"""Runs a lowered control tree: each node becomes a closure, each step is logged.

The log of executed step ids is what the execution profile is built from; lightweight
profiling's blocks log negative codes in it around their bodies.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from ipu_engine.poplar.access import Memory
from ipu_engine.poplar.compiler.steps import (
    Block,
    BlockMark,
    Branch,
    CallNode,
    Loop,
    Node,
    StepNode,
    WhileLoop,
)

Runner = Callable[["RunContext"], None]


@dataclass
class RunContext:
    """What one run works on: engine memory, connected streams, where prints go."""

    memory: Memory
    streams: dict[str, Any]
    print_stream: IO[str] | None = None
    executed: array = field(default_factory=lambda: array("i"))


def build_runner(node: Node, functions: dict[int, Runner], marked: bool = True) -> Runner:
    """Turn a control node into a closure; ``functions`` is filled in before any run.
    Unless ``marked``, lightweight profiling's blocks run their bodies without logging
    their marks (for a program whose marked log is known before it runs: ``one_path``)."""
    if isinstance(node, BlockMark) and not marked:
        return build_runner(node.body, functions, marked)
    if isinstance(node, StepNode):
        sid, action = node.step.id, node.step.action
        if action is None:
            return lambda ctx: ctx.executed.append(sid)

        def run_step(ctx: RunContext) -> None:
            ctx.executed.append(sid)
            action(ctx)

        return run_step
    if isinstance(node, Block):
        runners = tuple(build_runner(item, functions, marked) for item in node.items)

        def run_block(ctx: RunContext) -> None:
            for r in runners:
                r(ctx)

        return run_block
    if isinstance(node, BlockMark):  # lightweight profiling: codes around the body
        start, end = node.start, node.end
        body = node.body.items if isinstance(node.body, Block) else [node.body]
        parts = tuple(build_runner(item, functions, marked) for item in body)  # one call less

        def run_marked(ctx: RunContext) -> None:
            executed = ctx.executed
            executed.append(start)
            for part in parts:
                part(ctx)
            executed.append(end)

        return run_marked
    sid = node.step.id if node.step is not None else -1
    if isinstance(node, Loop):
        body, count = build_runner(node.body, functions, marked), node.count

        def run_loop(ctx: RunContext) -> None:
            ctx.executed.append(sid)
            for _ in range(count):
                body(ctx)

        return run_loop
    if isinstance(node, WhileLoop):
        cond, body = (
            build_runner(node.cond, functions, marked),
            build_runner(node.body, functions, marked),
        )
        pred, until = node.predicate, node.until

        def run_while(ctx: RunContext) -> None:
            ctx.executed.append(sid)
            cond(ctx)
            while bool(pred.read(ctx.memory)[0]) != until:
                body(ctx)
                cond(ctx)

        return run_while
    if isinstance(node, Branch):
        then, else_ = (
            build_runner(node.then, functions, marked),
            build_runner(node.else_, functions, marked),
        )
        pred = node.predicate

        def run_branch(ctx: RunContext) -> None:
            ctx.executed.append(sid)
            (then if bool(pred.read(ctx.memory)[0]) else else_)(ctx)

        return run_branch
    if isinstance(node, CallNode):
        fid = node.function

        def run_call(ctx: RunContext) -> None:
            ctx.executed.append(sid)
            functions[fid](ctx)

        return run_call
    raise TypeError(f"unknown control node {node!r}")
