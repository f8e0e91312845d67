"""Control programs, as Poplar's ``poplar::program``: what the engine runs, in order.

Programs are plain descriptions; the engine checks and lowers them when it compiles.
"""

from __future__ import annotations

from collections.abc import Iterable

from ipu_engine.common.arguments import count_arg, flag_arg, name_arg
from ipu_engine.common.errors import ProgramError
from ipu_engine.poplar.debug import scoped_name
from ipu_engine.poplar.graph import Function
from ipu_engine.poplar.journal import recorded, recorded_class
from ipu_engine.poplar.streams import DataStream
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import ComputeSet


class Program:
    """Base of every control program."""

    kind = "Program"
    made_by = None  # the recorded call that made it (ipu_engine.poplar.journal), if any

    def __init__(self, name: str = "") -> None:
        name = name_arg(name, f"{self.kind}: the name", ProgramError)
        self.name = scoped_name(name) if name else ""
        # The debug context of the library op that made this program, if any.
        self.debug_id = -1

    def children(self) -> list[Program]:
        return []

    def describe(self) -> str:
        return f"{self.kind}({self.name})" if self.name else self.kind


@recorded_class
class Sequence(Program):
    """Programs run one after the other."""

    kind = "Sequence"

    def __init__(self, *programs: Program | Iterable[Program], name: str = "") -> None:
        super().__init__(name)
        self.programs: list[Program] = []
        self.journal_log: list = []  # recorded calls that added to it (journal)
        for i, p in enumerate(programs):
            if isinstance(p, Program):
                self.add(p)
            elif isinstance(p, str | bytes) or not isinstance(p, Iterable):
                raise ProgramError(
                    f"Sequence argument {i} must be a program or a list of programs, "
                    f"got {type(p).__name__}"
                )
            else:
                for q in p:
                    self.add(q)

    @recorded("Sequence.add")
    def add(self, program: Program) -> Sequence:
        if not isinstance(program, Program):
            raise ProgramError(f"Sequence.add needs a program, got {type(program).__name__}")
        path = path_to(program, self)
        if path is not None:
            chain = " -> ".join(p.describe() for p in [self, *path])
            raise ProgramError(
                f"Sequence.add: {program.describe()} contains this sequence ({chain}); "
                "a program cannot contain itself -- use Repeat to run something again"
            )
        self.programs.append(program)
        return self

    def children(self) -> list[Program]:
        return list(self.programs)


@recorded_class
class Block(Program):
    """A program to scope another, as Poplar's ``program::Block``: it runs ``body``, and when
    the engine option ``profiler.blocks.filter`` (a regular expression) matches its name,
    lightweight profiling times every execution of it. Unmatched, it is only its body."""

    kind = "Block"

    def __init__(self, body: Program, name: str = "") -> None:
        super().__init__(name)
        self.body = _program(body, "Block body")

    def children(self) -> list[Program]:
        return [self.body]


@recorded_class
class Execute(Program):
    """Run every vertex of a compute set: one BSP compute phase."""

    kind = "Execute"

    def __init__(self, compute_set: ComputeSet, name: str = "") -> None:
        if not isinstance(compute_set, ComputeSet):
            raise ProgramError(f"Execute needs a compute set, got {type(compute_set).__name__}")
        super().__init__(name_arg(name, "Execute: the name", ProgramError) or compute_set.name)
        self.compute_set = compute_set


@recorded_class
class Copy(Program):
    """Copy tensor -> tensor, stream -> tensor (host to IPU) or tensor -> stream."""

    kind = "Copy"

    def __init__(self, src: Tensor | DataStream, dst: Tensor | DataStream, name: str = "") -> None:
        for end, what in ((src, "source"), (dst, "destination")):
            if not isinstance(end, Tensor | DataStream):
                raise ProgramError(f"Copy {what} must be a Tensor or a stream, got {end!r}")
        if isinstance(src, DataStream) and isinstance(dst, DataStream):
            raise ProgramError(
                f"Copy from stream {src.name!r} to stream {dst.name!r}: one end must be a tensor"
            )
        super().__init__(name)
        self.src = src
        self.dst = dst


@recorded_class
class Repeat(Program):
    """Run ``body`` a fixed number of times."""

    kind = "Repeat"

    def __init__(self, count: int, body: Program, name: str = "") -> None:
        self.count = count_arg(count, "Repeat count", ProgramError)
        super().__init__(name)
        self.body = _program(body, "Repeat body")

    def children(self) -> list[Program]:
        return [self.body]


@recorded_class
class RepeatWhileTrue(Program):
    """Run ``cond``; while the scalar ``predicate`` is true, run ``body`` and ``cond`` again."""

    kind = "RepeatWhileTrue"
    until = False

    def __init__(self, cond: Program, predicate: Tensor, body: Program, name: str = "") -> None:
        super().__init__(name)
        self.cond = _program(cond, f"{self.kind} condition")
        self.predicate = _predicate(predicate, self.kind)
        self.body = _program(body, f"{self.kind} body")

    def children(self) -> list[Program]:
        return [self.cond, self.body]


@recorded_class
class RepeatWhileFalse(RepeatWhileTrue):
    """As RepeatWhileTrue, looping while the predicate is false."""

    kind = "RepeatWhileFalse"
    until = True


@recorded_class
class If(Program):
    """Run ``then`` if the scalar ``predicate`` is non-zero, else ``else_``."""

    kind = "If"

    def __init__(
        self, predicate: Tensor, then: Program, else_: Program | None = None, name: str = ""
    ) -> None:
        super().__init__(name)
        self.predicate = _predicate(predicate, "If")
        self.then = _program(then, "If then-branch")
        self.else_ = Sequence() if else_ is None else _program(else_, "If else-branch")

    def children(self) -> list[Program]:
        return [self.then, self.else_]


@recorded_class
class Call(Program):
    """Run a function made with ``graph.add_function(program)``; its code exists once."""

    kind = "Call"

    def __init__(self, function: Function, name: str = "") -> None:
        if not isinstance(function, Function):
            raise ProgramError(f"Call needs a Function from graph.add_function, got {function!r}")
        super().__init__(name_arg(name, "Call: the name", ProgramError) or function.name)
        self.function = function


@recorded_class
class PrintTensor(Program):
    """Print a tensor to the host console, as ``title: {1,2,3}``."""

    kind = "PrintTensor"

    def __init__(self, title: str | Tensor, tensor: Tensor | None = None) -> None:
        if isinstance(title, Tensor):
            title, tensor = title.name, title
        if not isinstance(tensor, Tensor):
            raise ProgramError(f"PrintTensor {title!r} needs a tensor")
        super().__init__()
        self.title = title
        self.tensor = tensor


@recorded_class
class Sync(Program):
    """An explicit synchronisation of every tile (or every IPU with ``global_=True``)."""

    kind = "Sync"

    def __init__(self, global_: bool = False, name: str = "") -> None:
        super().__init__(name)
        self.global_ = flag_arg(global_, "Sync: global_", ProgramError)


@recorded_class
class WriteUndef(Program):
    """Mark a tensor's contents as no longer needed: it is dead until written again."""

    kind = "WriteUndef"

    def __init__(self, tensor: Tensor, name: str = "") -> None:
        super().__init__(name)
        self.tensor = tensor


def path_to(start: Program, goal: Program) -> list[Program] | None:
    """The programs from ``start`` down to ``goal`` when ``goal`` is ``start`` or inside
    it, else None; a walk with its own stack (no recursion) that visits each program once."""
    stack: list[tuple[Program, int]] = [(start, 0)]
    seen: set[int] = set()
    path: list[Program] = []
    while stack:
        program, depth = stack.pop()
        del path[depth:]
        path.append(program)
        if program is goal:
            return path
        if id(program) in seen:
            continue
        seen.add(id(program))
        stack.extend((child, depth + 1) for child in reversed(program.children()))
    return None


def _program(program: Program, what: str) -> Program:
    if not isinstance(program, Program):
        raise ProgramError(f"{what} must be a program, got {type(program).__name__}")
    return program


def _predicate(predicate: Tensor, what: str) -> Tensor:
    if not isinstance(predicate, Tensor):
        raise ProgramError(f"{what} predicate must be a tensor, got {type(predicate).__name__}")
    if predicate.num_elements != 1:
        raise ProgramError(
            f"{what} predicate {predicate.name!r} must be a scalar tensor, "
            f"has shape {predicate.shape}"
        )
    return predicate
