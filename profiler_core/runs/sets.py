"""``{a,b,c}`` sets in a sweep's command: where they are, what each is called, how many runs
they make, and every combination of their values.

A set is ``{`` values separated by commas ``}`` where no value holds a quote, a brace or
white space, so a JSON argument (``{"a":1,"b":2}``) is never taken for one. Each set is a
parameter of the sweep, named after the option it belongs to (``--rows {1,2}`` and
``--rows={1,2}``: ``rows``; ``size={1,2}``: ``size``), else after its place in the command
(``arg2``), unless the set names itself: ``{rows=100,200}`` is the parameter ``rows`` with
the values 100 and 200. ``--engine-option KEY={v1,v2}`` makes a parameter named ``KEY``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from profiler_core.runs.errors import SweepError

_SET = re.compile(r"\{([^{}\s\"']*,[^{}\s\"']*)\}")
_OPTION = re.compile(r"^--?([A-Za-z][\w.-]*)$")
_KEYED = re.compile(r"^(?:--?)?([A-Za-z][\w.-]*)=")
_NAMED = re.compile(r"^([A-Za-z_]\w*)=")
MAX_RUNS = 10_000


@dataclass(frozen=True)
class Parameter:
    """One set: its name and values, in the order given."""

    name: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Template:
    """A text (an argument, an engine option's value) with its sets replaced by ``{0}``,
    ``{1}``, ... naming parameters by index; ``fill`` gives the text of one run."""

    text: str  # with {i} placeholders, literal braces doubled
    parameters: tuple[int, ...]  # the parameter index of each placeholder

    def fill(self, values: Sequence[str]) -> str:
        return self.text.format(*(values[p] for p in self.parameters))


class SetParser:
    """Collects the parameters of a command's arguments and engine options, in order."""

    def __init__(self) -> None:
        self.parameters: list[Parameter] = []

    def template(self, text: str, base_name: str) -> Template:
        """``text`` as a template; each set in it becomes a parameter named ``base_name``
        (``base_name_2`` for a second set in the same text, and so on)."""
        pieces: list[str] = []
        indices: list[int] = []
        at = 0
        for match in _SET.finditer(text):
            pieces.append(_escape(text[at : match.start()]))
            values = tuple(match.group(1).split(","))
            named = _NAMED.match(values[0])
            if named:
                values = (values[0][named.end() :], *values[1:])
            if any(v == "" for v in values):
                raise SweepError(f"the set {match.group(0)!r} in {text!r} has an empty value")
            if len(set(values)) != len(values):
                raise SweepError(f"the set {match.group(0)!r} in {text!r} repeats a value")
            name = base_name if not indices else f"{base_name}_{len(indices) + 1}"
            name = named.group(1) if named else name
            indices.append(self._add(name, values))
            pieces.append(f"{{{len(indices) - 1}}}")
            at = match.end()
        pieces.append(_escape(text[at:]))
        return Template("".join(pieces), tuple(indices))

    def _add(self, name: str, values: tuple[str, ...]) -> int:
        taken = {p.name for p in self.parameters}
        unique, n = name, 2
        while unique in taken:
            unique, n = f"{name}_{n}", n + 1
        self.parameters.append(Parameter(unique, values))
        return len(self.parameters) - 1


def argument_name(args: Sequence[str], index: int) -> str:
    """What a set in ``args[index]`` is called: its option's name (dashes as underscores,
    so it is a plain SQL column name), a ``key=`` prefix, else ``arg<index>``."""
    keyed = _KEYED.match(args[index])
    if keyed:
        return keyed.group(1).replace("-", "_")
    if index > 0:
        option = _OPTION.match(args[index - 1])
        if option:
            return option.group(1).replace("-", "_")
    return f"arg{index}"


def count_runs(parameters: Sequence[Parameter]) -> int:
    return math.prod(len(p.values) for p in parameters)


def check_count(parameters: Sequence[Parameter], max_runs: int) -> int:
    """The number of runs; refused (before anything is expanded) above ``max_runs``."""
    count = count_runs(parameters)
    if count > max_runs:
        sizes = " x ".join(f"{len(p.values)} ({p.name})" for p in parameters)
        raise SweepError(
            f"the sets make {count:,} runs ({sizes}), more than {max_runs:,}; give "
            f"--max-runs {count} to run them all"
        )
    return count


def combinations(parameters: Sequence[Parameter]) -> Iterator[tuple[str, ...]]:
    """Every combination of the parameters' values, the last parameter changing fastest."""
    return itertools.product(*(p.values for p in parameters))


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
