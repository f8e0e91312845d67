"""Program steps and the control tree that runs them.

Lowering turns a program into a tree of control nodes whose leaves are *program
steps* with Poplar's kinds; the executor runs the tree and logs each step it runs,
and the compile model gives each step its cycles and live memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ipu_engine.poplar.access import Access
from profiler_core.model.kinds import StepKind

__all__ = [
    "Block",
    "BlockMark",
    "Branch",
    "CallNode",
    "Loop",
    "Node",
    "Step",
    "StepKind",
    "StepNode",
    "TreeNode",
    "WhileLoop",
]


Action = Callable[[Any], None]


@dataclass(eq=False)
class Step:
    """One program step: what the IPU does between two syncs, or a control decision."""

    id: int
    kind: StepKind
    name: str
    debug_id: int = -1
    action: Action | None = None
    compute_set: int = -1
    # Filled by the compile model: facts used for cycles, memory and liveness.
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Node:
    """A node of the control tree; ``step`` is the control step it is logged as, if any."""

    step: Step | None = None


@dataclass(eq=False)
class StepNode(Node):
    pass


@dataclass(eq=False)
class Block(Node):
    items: list[Node] = field(default_factory=list)


@dataclass(eq=False)
class Loop(Node):
    count: int = 0
    body: Node = field(default_factory=Block)


@dataclass(eq=False)
class WhileLoop(Node):
    cond: Node = field(default_factory=Block)
    predicate: Access | None = None
    body: Node = field(default_factory=Block)
    until: bool = False  # RepeatWhileFalse


@dataclass(eq=False)
class Branch(Node):
    predicate: Access | None = None
    then: Node = field(default_factory=Block)
    else_: Node = field(default_factory=Block)


@dataclass(eq=False)
class CallNode(Node):
    function: int = -1


@dataclass(eq=False)
class BlockMark(Node):
    """A lightweight-profiling block (``compiler/block_marks.py``): run, it logs its negative
    ``start`` code among the executed step ids, runs ``body``, then logs ``end`` -- no step
    is added."""

    start: int = -1
    end: int = -2
    body: Node = field(default_factory=Block)


@dataclass
class TreeNode:
    """A node of the program tree as written: kind, name, parent, where its steps start."""

    kind: str  # profiler_core ProgramKind name
    name: str
    parent: int
    first_step: int = -1
    count: int = 0
    debug_id: int = -1
    function: int = -1
