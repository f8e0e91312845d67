"""Programs with one path: what a run of a control tree logs, known before it runs.

A tree without RepeatWhile or If (in itself or any function it calls) runs the same steps in
the same order every time, so the log a run writes -- step ids, and lightweight profiling's
negative marks around its blocks -- is one fixed array. The engine runs such a program
without logging marks and takes its marked log from here: lightweight profiling then costs
its runs nothing beyond what the marks are for (``report/blocks.py``).

The walk mirrors ``executor.build_runner`` entry for entry; ``tests/ipu_engine/
test_one_path.py`` checks that each fixed log equals the log a marked run writes.
"""

from __future__ import annotations

from array import array

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


class OnePath:
    """The fixed logs of one executable's trees, each worked out once when first asked."""

    def __init__(self, functions: dict[int, Node]) -> None:
        self._functions = functions
        self._logs: dict[int, array | None] = {}  # function id -> its fixed log, or None

    def log(self, root: Node) -> array | None:
        """The log every run of ``root`` writes, or None when it depends on the data."""
        return self._walk(root)

    def _walk(self, node: Node) -> array | None:
        if isinstance(node, StepNode):
            return array("i", [node.step.id])
        if isinstance(node, Block):
            out = array("i")
            for item in node.items:
                part = self._walk(item)
                if part is None:
                    return None
                out.extend(part)
            return out
        if isinstance(node, BlockMark):
            body = self._walk(node.body)
            return (
                None if body is None else array("i", [node.start]) + body + array("i", [node.end])
            )
        if isinstance(node, (WhileLoop, Branch)):
            return None
        sid = node.step.id if node.step is not None else -1
        if isinstance(node, Loop):
            body = self._walk(node.body)
            return None if body is None else array("i", [sid]) + body * node.count
        if isinstance(node, CallNode):
            body = self._function(node.function)
            return None if body is None else array("i", [sid]) + body
        raise TypeError(f"unknown control node {node!r}")

    def _function(self, fid: int) -> array | None:
        if fid not in self._logs:
            self._logs[fid] = None  # a function never calls itself (program_tree checks)
            self._logs[fid] = self._walk(self._functions[fid])
        return self._logs[fid]
