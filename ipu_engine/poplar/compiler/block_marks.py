"""Lightweight profiling's blocks at compile time: which programs are timed, and the marks
lowered around them.

As Poplar does with ``profiler.blocks.filter`` and ``profiler.programs.filter`` (regular
expressions matched against the whole name, as ``std::regex_match``): a ``Block`` program
whose name the first matches, and any program whose name in the program tree (what the
Program Tree page shows: an Execute's compute set, a Call's function) the second matches, is
lowered inside a ``BlockMark`` node. Running, it logs a negative code among the executed step
ids before and after its body, so no program step is added: step numbering, cycles, liveness and the
executable cache are the same with lightweight profiling on or off, and a run pays one list
append per mark. ``report/blocks.py`` turns the marks of a run into timed executions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ipu_engine.poplar.compiler.steps import BlockMark, Node
from ipu_engine.poplar.program import Block as BlockProgram
from ipu_engine.poplar.program import Call, Program
from profiler_core.model.kinds import BlockKind

if TYPE_CHECKING:
    from ipu_engine.poplar.options import EngineOptions

log = logging.getLogger("poplar")

BLOCKS_FILTER = "profiler.blocks.filter"
PROGRAMS_FILTER = "profiler.programs.filter"


def start_code(site: int) -> int:
    """The code the start mark of a block's site logs (negative: step ids are not)."""
    return -2 * site - 1


def end_code(site: int) -> int:
    return -2 * site - 2


@dataclass
class MarkedBlock:
    """One timed block: a name and a kind (programs of one name are one block)."""

    name: str
    kind: BlockKind


@dataclass
class Site:
    """One place a block was lowered (a program tree node): the steps it lowered to
    [first, stop) and the functions it calls; its marks carry its number."""

    block: int
    node: int
    first: int
    stop: int
    calls: set[int] = field(default_factory=set)


class BlockMarks:
    """The two filters of one engine and the blocks they chose while its programs lowered."""

    def __init__(self, blocks_filter: str | None, programs_filter: str | None) -> None:
        self.blocks_filter = blocks_filter
        self.programs_filter = programs_filter
        self._blocks_re = re.compile(blocks_filter) if blocks_filter is not None else None
        self._programs_re = re.compile(programs_filter) if programs_filter is not None else None
        self.blocks: list[MarkedBlock] = []
        self.sites: list[Site] = []
        # a block is what its name and kind say: programs of one name are one block
        self._by_name: dict[tuple[str, BlockKind], int] = {}
        self._open: list[set[int]] = []  # functions called under each program being lowered
        self.function_calls: dict[int, set[int]] = {}  # functions each function calls
        self.block_program_names: list[str] = []  # every Block program's name, for warnings
        self.program_names: list[str] = []  # a few names the programs filter was tried on

    @classmethod
    def from_options(cls, options: EngineOptions) -> BlockMarks | None:
        """The marks the options ask for, or None when lightweight profiling is off."""
        blocks, programs = options[BLOCKS_FILTER], options[PROGRAMS_FILTER]
        if blocks is None and programs is None:
            return None
        return cls(blocks, programs)

    def around(self, lowering: Any, program: Program, lower: Callable[[Program], Node]) -> Node:
        """``lower(program)``, between marks when ``program`` is a block."""
        node, first = len(lowering.nodes), len(lowering.steps)
        if isinstance(program, Call):
            for called in self._open:
                called.add(program.function.id)
        calls: set[int] = set()
        self._open.append(calls)
        try:
            lowered = lower(program)
        finally:
            self._open.pop()
        if isinstance(program, Call):
            self.function_calls.setdefault(program.function.id, set()).update(calls)
        name = lowering.nodes[node].name if node < len(lowering.nodes) else ""
        kind = self._kind(program, name)
        if kind is None:
            return lowered
        block = self._by_name.setdefault((name, kind), len(self.blocks))
        if block == len(self.blocks):
            self.blocks.append(MarkedBlock(name, kind))
        site = len(self.sites)
        self.sites.append(Site(block, node, first, len(lowering.steps), calls))
        return BlockMark(start=start_code(site), end=end_code(site), body=lowered)

    def _kind(self, program: Program, name: str) -> BlockKind | None:
        if isinstance(program, BlockProgram):
            self.block_program_names.append(name)
            if self._blocks_re is not None and self._blocks_re.fullmatch(name):
                return BlockKind.BLOCK
        if self._programs_re is None:
            return None
        if len(self.program_names) < 8 and name not in self.program_names:
            self.program_names.append(name)
        return BlockKind.PROGRAM if self._programs_re.fullmatch(name) else None

    def called_functions(self, site: Site) -> set[int]:
        """Every function ``site`` calls, directly or through other functions."""
        found, todo = set(), list(site.calls)
        while todo:
            fid = todo.pop()
            if fid not in found:
                found.add(fid)
                todo += self.function_calls.get(fid, ())
        return found

    def warn_unmatched(self) -> None:
        """A filter that matched nothing is said once (a ``PO:`` warning), not ignored."""
        kinds = {b.kind for b in self.blocks}
        if self.blocks_filter is not None and BlockKind.BLOCK not in kinds:
            seen = sorted(set(self.block_program_names))
            names = (
                f"the Block programs are {_listed(seen)}" if seen else "there is no Block program"
            )
            log.warning(
                "PO: engine option %s=%r matches no Block program's whole name (%s); no "
                "Block is timed",
                BLOCKS_FILTER,
                self.blocks_filter,
                names,
            )
        if self.programs_filter is not None and BlockKind.PROGRAM not in kinds:
            log.warning(
                "PO: engine option %s=%r matches no program's whole name (names such as "
                "%s, as the Program Tree shows them); no program is timed",
                PROGRAMS_FILTER,
                self.programs_filter,
                _listed(self.program_names),
            )


def _listed(names: list[str], most: int = 6) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
