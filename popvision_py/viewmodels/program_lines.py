"""The Program Tree's lines as index arrays: program nodes and, under each node, its own
program steps, in program order, for a lazy tree model (no Python object per line).

A line id is a node id (0..P-1) or ``P + step``. Every array here is built once with numpy
(children of every line in CSR form, each line's row under its parent, its section), so
showing, expanding to, or searching a line of a million-line, 10,000-level tree needs no
recursion and no walk over the whole tree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from profiler_core.analysis.program_tree import ProgramTree
from profiler_core.model.kinds import ProgramKind
from profiler_core.model.strings import Strings
from profiler_core.model.unique import sorted_unique

SECTIONS = ("Control Programs", "Functions")

PROGRAM_KIND_NAMES = {
    ProgramKind.SEQUENCE: "Sequence",
    ProgramKind.EXECUTE: "Execute",
    ProgramKind.COPY: "Copy",
    ProgramKind.STREAM_COPY: "StreamCopy",
    ProgramKind.REPEAT: "Repeat",
    ProgramKind.REPEAT_WHILE: "RepeatWhileTrue",
    ProgramKind.IF: "If",
    ProgramKind.CALL: "Call",
    ProgramKind.PRINT_TENSOR: "PrintTensor",
    ProgramKind.SYNC: "Sync",
    ProgramKind.WRITE_UNDEF: "WriteUndef",
    ProgramKind.FUNCTION: "Function",
}


def program_kind_name(kind: int) -> str:
    try:
        return PROGRAM_KIND_NAMES[ProgramKind(int(kind))]
    except ValueError:
        return f"kind {int(kind)}"


class ProgramLines:
    """Nodes and steps of a ``ProgramTree`` as the lines of a tree view, per section.

    ``step_names`` are string indices of each step's name and ``strings`` the string table
    both they and the tree's node names index (-1 is an empty name).
    """

    def __init__(self, tree: ProgramTree, step_names: np.ndarray, strings: Sequence[str]) -> None:
        self.tree = tree
        self.strings = strings
        self.num_nodes = num_nodes = len(tree)
        self.num_steps = num_steps = len(tree.step_executions)
        size = num_nodes + num_steps
        self.step_node = np.full(num_steps, -1, dtype=np.int64)
        self.step_node[tree.steps] = np.repeat(
            np.arange(num_nodes, dtype=np.int64), np.diff(tree.step_offsets)
        )
        self.parent = np.concatenate((tree.parent.astype(np.int64), self.step_node))
        self.name = np.concatenate(
            (tree.name.astype(np.int64), np.asarray(step_names, dtype=np.int64))
        )
        self.key = self._program_order_keys()
        self.rank = np.concatenate((np.zeros(num_nodes, np.int8), np.ones(num_steps, np.int8)))
        self.child_offsets, self.children, self.row = self._children_by_line(size)
        self.sections = self._sections()
        self.section_of = self._section_of_lines()
        for rows in self.sections:
            self.row[rows] = np.arange(rows.size)
        self._search_blob: tuple[bytes, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.num_nodes + self.num_steps

    # -- building ---------------------------------------------------------------------------
    def _program_order_keys(self) -> np.ndarray:
        """A key that sorts lines in program order: a step's own index; a node's first step
        at or after it in depth-first order (so a node sorts just before its first step)."""
        tree = self.tree
        has_steps = tree.step_offsets[1:] > tree.step_offsets[:-1]
        own_first = np.full(self.num_nodes, self.num_steps, dtype=np.int64)
        own_first[has_steps] = tree.steps[tree.step_offsets[:-1][has_steps]]
        node_key = np.minimum.accumulate(own_first[::-1])[::-1] if self.num_nodes else own_first
        return np.concatenate((node_key, np.arange(self.num_steps, dtype=np.int64)))

    def _children_by_line(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Children of every line in program order (CSR), and each line's row under its parent.
        Ties in the key put a node before its steps and a parent before its child."""
        ids = np.arange(size, dtype=np.int64)
        owned = np.flatnonzero(self.parent >= 0)
        owner = self.parent[owned]
        order = np.lexsort((ids[owned], self.rank[owned], self.key[owned], owner))
        children = owned[order]
        counts = np.bincount(owner, minlength=size)
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        row = np.zeros(size, dtype=np.int64)
        row[children] = np.arange(children.size) - offsets[self.parent[children]]
        return offsets, children, row

    def _sections(self) -> list[np.ndarray]:
        """Top lines of "Control Programs" (engine programs, then any other root that is not
        a function) and of "Functions" (Function nodes without a parent)."""
        tree = self.tree
        top = np.flatnonzero(tree.parent < 0)
        roots = np.asarray(tree.roots, dtype=np.int64)
        roots = roots[(roots >= 0) & (roots < self.num_nodes)]
        roots = roots[np.sort(np.unique(roots, return_index=True)[1])]
        is_function = tree.kind[top] == ProgramKind.FUNCTION
        functions = top[is_function & ~np.isin(top, roots)]
        others = top[~is_function & ~np.isin(top, roots)]
        return [np.concatenate((roots, others)).astype(np.int64), functions.astype(np.int64)]

    def _section_of_lines(self) -> np.ndarray:
        """The section of each line (-1 for lines under no top line), by pointer jumping up
        the parents: log(depth) numpy passes, however deep the tree."""
        up = self.parent.copy()
        top = np.flatnonzero(up < 0)
        up[top] = top
        while True:
            nxt = up[up]
            if np.array_equal(nxt, up):
                break
            up = nxt
        self.top_line = up
        section = np.full(len(self), -1, dtype=np.int64)
        for number, rows in enumerate(self.sections):
            mark = np.full(len(self), -1, dtype=np.int64)
            mark[rows] = number
            section = np.where(mark[up] >= 0, mark[up], section)
        return section

    # -- shape of the tree ------------------------------------------------------------------
    def child_count(self, line: int) -> int:
        return int(self.child_offsets[line + 1] - self.child_offsets[line])

    def child(self, line: int, row: int) -> int:
        return int(self.children[self.child_offsets[line] + row])

    def is_step(self, line: int) -> bool:
        return line >= self.num_nodes

    def step_of(self, line: int) -> int:
        return line - self.num_nodes

    def line_of_step(self, step: int) -> int:
        """The line of ``step``, -1 when it is not in the tree."""
        if not 0 <= step < self.num_steps or self.step_node[step] < 0:
            return -1
        return self.num_nodes + step

    def ancestors(self, line: int) -> list[int]:
        """The lines above ``line``, top line first (a loop, never recursion)."""
        path = []
        up = int(self.parent[line])
        while up >= 0:
            path.append(up)
            up = int(self.parent[up])
        path.reverse()
        return path

    def subtree_steps(self, line: int) -> np.ndarray:
        """Program steps of a step line (itself) or of a node's subtree, in program order.
        The subtree is gathered level by level with numpy (a function body lowered between
        two children means a subtree need not be a contiguous run of nodes)."""
        if self.is_step(line):
            return np.array([self.step_of(line)], dtype=np.int64)
        tree = self.tree
        level = np.array([line], dtype=np.int64)
        nodes = [level]
        while level.size:
            level = _gather(tree.child_offsets, tree.children, level)
            nodes.append(level)
        steps = _gather(tree.step_offsets, tree.steps, np.concatenate(nodes))
        return np.sort(steps)

    def expand_plan(self, section: int, budget: int) -> tuple[list[int], int, bool]:
        """Node lines to expand, in display order, so that at most ``budget`` lines show:
        the lines to expand, how many lines then show, and whether that is every line."""
        tops = self.sections[section]
        shown = int(tops.size)
        plan: list[int] = []
        stack = tops[::-1].tolist()
        complete = True
        while stack:
            line = stack.pop()
            count = self.child_count(line)
            if count == 0:
                continue
            if shown + count > budget:
                complete = False
                break
            plan.append(line)
            shown += count
            begin = self.child_offsets[line]
            stack.extend(self.children[begin : begin + count][::-1].tolist())
        return plan, shown, complete

    # -- names and search -------------------------------------------------------------------
    def name_of(self, line: int) -> str:
        index = int(self.name[line])
        return self.strings[index] if index >= 0 else ""

    def search(self, text: str, section: int) -> np.ndarray:
        """Lines of ``section`` whose name contains ``text`` (ignoring ASCII case), in program
        order: one C-level scan of the string table's UTF-8 bytes, then numpy lookups."""
        needle = text.strip().lower().encode("utf-8")
        if not needle:
            return np.zeros(0, dtype=np.int64)
        blob, offsets = self._blob()
        hits = np.fromiter(
            (m.start() for m in re.finditer(re.escape(needle), blob)), dtype=np.int64
        )
        string_ids = np.searchsorted(offsets, hits, side="right") - 1
        inside = hits + len(needle) <= offsets[string_ids + 1]  # not across two names
        matched = sorted_unique(string_ids[inside])
        lines = np.flatnonzero(np.isin(self.name, matched) & (self.section_of == section))
        top_row = self.row[self.top_line[lines]]
        order = np.lexsort((lines, self.rank[lines], self.key[lines], top_row))
        return lines[order]

    def _blob(self) -> tuple[bytes, np.ndarray]:
        """The string table as lowered UTF-8 bytes with each string's byte offsets (the
        report's own blob when it is a ``Strings``, so nothing is decoded)."""
        if self._search_blob is None:
            if isinstance(self.strings, Strings):
                blob, offsets = bytes(self.strings.blob), self.strings.offsets
            else:
                encoded = [str(name).encode("utf-8") for name in self.strings]
                sizes = np.fromiter((len(b) for b in encoded), np.int64, len(encoded))
                offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
                blob = b"".join(encoded)
            self._search_blob = (blob.lower(), np.asarray(offsets, dtype=np.int64))
        return self._search_blob


def _gather(offsets: np.ndarray, values: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """``values[offsets[o]:offsets[o + 1]]`` of every owner, concatenated, without a loop."""
    starts, ends = offsets[owners], offsets[owners + 1]
    counts = ends - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return values[np.arange(total) + shift].astype(np.int64)
