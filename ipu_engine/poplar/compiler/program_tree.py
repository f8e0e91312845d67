"""The shape of the programs an engine compiles: no program inside itself (directly, through
other programs or through a called function) and no deeper nesting than the engine can
lower, checked with an explicit stack before the recursive lowering starts."""

from __future__ import annotations

from collections.abc import Sequence

from ipu_engine.common.errors import ProgramError
from ipu_engine.poplar.program import Call, Program

#: Deepest nesting of programs (Sequence in Repeat in If ...) an engine compiles; lowering
#: and running recurse once per level, so deeper trees would exhaust Python's stack.
MAX_PROGRAM_DEPTH = 150
#: Most programs an engine lowers, counting a shared subprogram once per place it runs
#: (a chain of Sequences each holding the next twice would otherwise lower 2**depth).
MAX_LOWERED_PROGRAMS = 5_000_000


def _inner(program: Program) -> list[Program]:
    if isinstance(program, Call):
        return [program.function.program]
    return program.children()


def check_program_tree(programs: Sequence[Program]) -> None:
    """Raise ``ProgramError`` naming the programs of a cycle, or the depth of a tree nested
    deeper than ``MAX_PROGRAM_DEPTH``, or one that would lower to more than
    ``MAX_LOWERED_PROGRAMS``. Shared subprograms are walked once."""
    height: dict[int, int] = {}  # levels below each finished program, itself included
    size: dict[int, int] = {}  # programs lowered for each finished program, itself included
    total = 0
    for root in programs:
        path: list[Program] = []
        on_path: set[int] = set()
        stack: list[tuple[Program, bool]] = [(root, False)]
        while stack:
            program, done = stack.pop()
            key = id(program)
            if done:
                path.pop()
                on_path.discard(key)
                inner = _inner(program)
                height[key] = 1 + max((height[id(c)] for c in inner), default=0)
                # a called function is lowered once, wherever it is called
                size[key] = 1 + (
                    0 if isinstance(program, Call) else sum(size[id(c)] for c in inner)
                )
                continue
            if key in height:
                continue
            if key in on_path:
                start = next(i for i, p in enumerate(path) if p is program)
                chain = " -> ".join(p.describe() for p in [*path[start:], program])
                raise ProgramError(
                    f"{program.describe()} contains itself ({chain}); programs form a tree "
                    "-- use Repeat to run something again"
                )
            path.append(program)
            on_path.add(key)
            if len(path) > MAX_PROGRAM_DEPTH:
                raise ProgramError(
                    f"programs are nested more than {MAX_PROGRAM_DEPTH} deep (under "
                    f"{root.describe()}); the engine compiles at most "
                    "ipu_engine.poplar.compiler.program_tree.MAX_PROGRAM_DEPTH levels"
                )
            stack.append((program, True))
            stack.extend((child, False) for child in reversed(_inner(program)))
        total += size[id(root)]
        if total > MAX_LOWERED_PROGRAMS:
            raise ProgramError(
                f"{root.describe()} would lower to {total} programs (shared subprograms "
                f"count once per place they run), more than the "
                f"{MAX_LOWERED_PROGRAMS} an engine compiles "
                "(ipu_engine.poplar.compiler.program_tree.MAX_LOWERED_PROGRAMS); use Repeat or a "
                "function (graph.add_function + Call) to run the same program many times"
            )
