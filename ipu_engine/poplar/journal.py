"""The record of how a user's program built its graph: each public API call it made -- a
variable, a tile mapping, a library op with its operands and options, a program -- kept
so that ``autoReport.outputSerializedGraph`` can write it and a what-if can replay it
with one option changed (``ipu_engine.replan``).

``recorded(name)`` wraps an API function. Only the outermost call is kept (a library op's
own variables and compute sets are its business: a replay makes them again), and nothing
is kept while ``paused()`` (the front-end builds graphs from its own record, the traced
IR) or for a graph whose ``journal`` is None. A call is kept where it can be found again:
in the journal of the graph it names, in the log of every program it adds to, and on each
object it returns (``made_by``), so a record is everything reachable from an engine's
graph and programs (``journal_record``). Arguments are kept as given and encoded only
when a record is written.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_state = threading.local()
_sequence = itertools.count()

#: name -> the unwrapped function, for a replay (filled by ``recorded``)
REGISTRY: dict[str, Callable[..., Any]] = {}


@dataclass(eq=False)
class Call:
    """One recorded API call: its place in the program's order, the API's name, its
    arguments by parameter name (positional ones bound to their names), the virtual
    graph's tiles in force (``on_tiles``) and how many results it returned."""

    seq: int
    api: str
    arguments: dict[str, Any]
    tile_range: tuple[int, int] | None = None


@dataclass
class Journal:
    """A graph's recorded calls in order, and what could not be recorded."""

    calls: list[Call] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _depth() -> int:
    return getattr(_state, "depth", 0)


class paused:  # noqa: N801 - used as a context manager, like contextlib's
    """``with journal.paused():`` -- nothing called inside is recorded (the front-end's
    graph building, a replay)."""

    def __enter__(self) -> None:
        _state.depth = _depth() + 1

    def __exit__(self, *exc: object) -> None:
        _state.depth = _depth() - 1


def recorded(api: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: keep each outermost call of the function as ``api`` (see the module)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)
        REGISTRY[api] = fn

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _depth():
                return fn(*args, **kwargs)
            _state.depth = 1
            try:
                result = fn(*args, **kwargs)
            finally:
                _state.depth = 0
            _note(api, signature, args, kwargs, result)
            return result

        wrapper.__recorded_api__ = api  # type: ignore[attr-defined]
        return wrapper

    return decorate


def recorded_class(cls: type) -> type:
    """Class decorator: keep each outermost construction of ``cls`` (a program) as
    ``program.<class name>``; the object made is its result."""
    init = cls.__init__
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        if _depth():
            init(self, *args, **kwargs)
            return
        _state.depth = 1
        try:
            init(self, *args, **kwargs)
        finally:
            _state.depth = 0
        _note(f"program.{type(self).__name__}", signature, (self, *args), kwargs, self, True)

    cls.__init__ = __init__
    REGISTRY[f"program.{cls.__name__}"] = cls
    return cls


def not_recorded(api: str, why: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for an API a record cannot replay (user vertices are Python code): an
    outermost call makes the graph's record say so, by name."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            result = fn(*args, **kwargs)
            if not _depth():
                for graph in _graphs(args, kwargs):
                    graph.journal.problems.append(f"{api}: {why}")
            return result

        return wrapper

    return decorate


def record_api(namespace: dict[str, Any], package: str, names: list[str]) -> None:
    """Wrap the functions ``names`` of a library package's namespace as ``package.name``."""
    for name in names:
        value = namespace[name]
        if inspect.isfunction(value) and not hasattr(value, "__recorded_api__"):
            namespace[name] = recorded(f"{package}.{name}")(value)


def _graphs(args: tuple, kwargs: dict) -> list[Any]:
    """The graphs among the top-level arguments that keep a journal."""
    found = []
    for value in (*args, *kwargs.values()):
        if getattr(value, "journal", None) is not None and hasattr(value, "target"):
            found.append(value)
    return found


def _note(
    api: str,
    signature: inspect.Signature,
    args: tuple,
    kwargs: dict,
    result: Any,
    constructed: bool = False,
) -> None:
    """Keep one call (see the module); ``constructed``: ``args[0]`` is the object made."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return
    arguments = dict(bound.arguments)
    if constructed:
        arguments.pop(next(iter(signature.parameters)))
    values = list(arguments.values())
    owners = [getattr(v, "graph", None) for v in values]
    owners = [g for g in owners if hasattr(g, "journal") and hasattr(g, "target")]
    graphs = [v for v in values if hasattr(v, "target") and hasattr(v, "journal")]
    if any(g.journal is None for g in (*graphs, *owners)):
        return  # a graph the front-end builds from its own record
    for key, value in arguments.items():  # containers the caller may change later
        if isinstance(value, list | dict):
            arguments[key] = value.copy()
    context = next(iter(graphs or owners), None)
    ranges = getattr(context, "_tile_ranges", None)
    tiles = (ranges[-1].start, ranges[-1].stop) if ranges else None
    call = Call(next(_sequence), api, arguments, tiles)
    for graph in graphs:
        graph.journal.calls.append(call)
    for value in values:
        log = getattr(value, "journal_log", None)
        if isinstance(log, list):
            log.append(call)
    results = result if isinstance(result, tuple | list) else (result,)
    index = -1 if not isinstance(result, tuple | list) else 0
    for i, item in enumerate(results):
        _made_by(item, call, index if index < 0 else i)


def _made_by(item: Any, call: Call, index: int) -> None:
    if item is None or isinstance(item, bool | int | float | str):
        return
    # frozen dataclasses (streams, functions) keep it too; a plain value cannot
    with contextlib.suppress(AttributeError, TypeError):
        object.__setattr__(item, "made_by", (call, index))
