"""The Program Tree report's state without Qt: what each line shows (name, kind, executions,
cycles, share of all cycles, step-kind colour), which steps the selected operation
highlights, and the search with next / previous in program order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from popvision_py.viewmodels.program_lines import SECTIONS, ProgramLines, program_kind_name
from popvision_py.viewmodels.search_matches import SearchMatches
from popvision_py.viewmodels.step_colors import (
    STEP_CLASS_COLORS,
    STEP_CLASS_OF_KIND,
    StepClass,
    step_kind_color,
)
from profiler_core.analysis.program_tree import ProgramTree
from profiler_core.model.kinds import StepKind

COLUMNS = ("Name", "Kind", "Executions", "Cycles", "% of cycles")
COLUMN_HELP = (
    "Program node (what the program wrote) or program step (what it was lowered to).",
    "Program kind (Sequence, Repeat, Execute ...) or program step kind (OnTileExecute, "
    "DoExchange, Sync ...).",
    "How often the line ran in the runs counted.",
    "Cycles of the line (a node: its whole subtree) in the runs counted; a step lasts as "
    "long as its slowest IPU.",
    "The line's cycles as a share of all executed cycles.",
)
NOT_RUN = "not run"


def step_kind_name(kind: int) -> str:
    try:
        return StepKind(int(kind)).poplar_name
    except ValueError:
        return f"kind {int(kind)}"


class ProgramTreeViewModel:
    """Lines of one section of a program tree, with highlight and search state."""

    def __init__(
        self,
        tree: ProgramTree,
        step_kind: np.ndarray,
        step_names: np.ndarray,
        strings: Sequence[str],
        executed: bool = True,
    ) -> None:
        self.lines = ProgramLines(tree, step_names, strings)
        self.tree = tree
        self.step_kind = np.asarray(step_kind)
        self.executed = executed
        self.total_cycles = int(tree.step_cycles.sum())
        self.section = 0
        self.highlighted = np.zeros(self.lines.num_steps, dtype=bool)
        self.matches = SearchMatches()  # lines whose name holds the search text
        self._node_kind_cache: dict[int, int] = {}

    # -- what a line shows --------------------------------------------------------------------
    def text(self, line: int, column: int) -> str:
        lines, tree = self.lines, self.tree
        step = lines.step_of(line) if lines.is_step(line) else -1
        if column == 0:
            return lines.name_of(line) or "(unnamed)"
        if column == 1:
            if step >= 0:
                return step_kind_name(self.step_kind[step])
            return program_kind_name(tree.kind[line])
        if not self.executed:
            return NOT_RUN
        cycles = int(tree.step_cycles[step] if step >= 0 else tree.cycles[line])
        if column == 2:
            runs = tree.step_executions[step] if step >= 0 else tree.executions[line]
            return f"{int(runs):,}"
        if column == 3:
            return f"{cycles:,}"
        if column == 4:
            share = 100.0 * cycles / self.total_cycles if self.total_cycles else 0.0
            return f"{share:.1f}%"
        return ""

    def value(self, line: int, column: int) -> object:
        """The unformatted number of a numeric column (None when not run)."""
        if column < 2 or not self.executed:
            return self.text(line, column)
        lines, tree = self.lines, self.tree
        step = lines.step_of(line) if lines.is_step(line) else -1
        if column == 2:
            return int(tree.step_executions[step] if step >= 0 else tree.executions[line])
        cycles = int(tree.step_cycles[step] if step >= 0 else tree.cycles[line])
        if column == 3:
            return cycles
        return cycles / self.total_cycles if self.total_cycles else 0.0

    def csv_rows(self) -> list[list[object]]:
        """Every line of both sections in program order (parents before children), with its
        section, depth and the columns' unformatted values: what Export CSV writes."""
        header = ["Section", "Depth", *COLUMNS[:4], "% of cycles"]
        rows: list[list[object]] = [header]
        for section, top in zip(SECTIONS, self.lines.sections, strict=True):
            stack = [(int(line), 0) for line in top[::-1]]
            while stack:
                line, depth = stack.pop()
                share = self.value(line, 4)
                share = round(100.0 * share, 3) if isinstance(share, float) else share
                values = [self.value(line, 2), self.value(line, 3), share]
                rows.append([section, depth, self.text(line, 0), self.text(line, 1), *values])
                count = self.lines.child_count(line)
                stack += [(self.lines.child(line, r), depth + 1) for r in range(count - 1, -1, -1)]
        return rows

    def color_kind(self, line: int) -> int:
        """The step kind a line is coloured by: a step's own kind; a node's dominant own step
        kind (most cycles, the first one when none ran), or -1 (control grey) without own
        steps."""
        if self.lines.is_step(line):
            return int(self.step_kind[self.lines.step_of(line)])
        if line not in self._node_kind_cache:
            own = self.tree.steps_of(line)
            if own.size == 0:
                self._node_kind_cache[line] = -1
            else:
                cycles = self.tree.step_cycles[own]
                self._node_kind_cache[line] = int(self.step_kind[own[int(np.argmax(cycles))]])
        return self._node_kind_cache[line]

    def color(self, line: int) -> str:
        kind = self.color_kind(line)
        return STEP_CLASS_COLORS[StepClass.CONTROL] if kind < 0 else step_kind_color(kind)

    def tooltip(self, line: int) -> str:
        kind = self.color_kind(line)
        label = "control" if kind < 0 else STEP_CLASS_OF_KIND[StepKind(kind)].value.lower()
        if self.lines.is_step(line):
            what = f"Program step {self.lines.step_of(line)}: {self.text(line, 1)}"
            colour = f"Coloured as {label} steps."
        else:
            what = f"Program node {line}: {self.text(line, 1)}"
            colour = (
                f"Coloured by its own program steps' dominant kind (most cycles): {label}."
                if kind >= 0
                else "Without steps of its own: control grey."
            )
        cycles = NOT_RUN if not self.executed else f"{self.text(line, 3)} cycles"
        return f"{self.lines.name_of(line)}\n{what}, {cycles}\n{colour}"

    def is_highlighted(self, line: int) -> bool:
        return self.lines.is_step(line) and bool(self.highlighted[self.lines.step_of(line)])

    # -- highlight --------------------------------------------------------------------------
    def set_highlighted_steps(self, steps: np.ndarray) -> None:
        self.highlighted[:] = False
        steps = np.asarray(steps, dtype=np.int64)
        steps = steps[(steps >= 0) & (steps < self.lines.num_steps)]
        self.highlighted[steps] = True

    def highlighted_lines(self, limit: int) -> list[int]:
        """Lines of the first ``limit`` highlighted steps of the section, in program order."""
        steps = np.flatnonzero(self.highlighted)
        lines = steps + self.lines.num_nodes
        lines = lines[(self.lines.step_node[steps] >= 0)]
        lines = lines[self.lines.section_of[lines] == self.section]
        return lines[:limit].tolist()

    # -- search -----------------------------------------------------------------------------
    def search(self, text: str) -> int:
        """Find lines of the section whose name contains ``text``; the number found."""
        return self.matches.set(text, self.lines.search(text, self.section))

    def next_match(self, backwards: bool = False) -> int:
        """The next (or previous) match in program order, wrapping round; -1 for none."""
        return self.matches.step(backwards)

    def match_text(self) -> str:
        return self.matches.describe()
