"""Debug contexts: who created each variable, compute set and program, and in which layer.

``with name_scope("layer1"):`` prefixes the names of everything created inside it, as
Poplar's ``DebugContext`` and the frameworks' name scopes do; reports show those names
as layers and operations.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: ipu_engine's folder: frames of any of its layers are not the user's line
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIPPED_FILES = (contextlib.__file__,)
_scopes = threading.local()


@dataclass(frozen=True)
class DebugContext:
    """One debug context: a name in a scope, the API that made it and where it was called."""

    id: int
    name: str
    parent: int  # -1 for a top-level context
    layer: str  # the outermost scope, "" if none
    op: str  # the library op ("popops::add") or "" for user code
    api: str  # the API call that created it ("Graph.add_variable")
    args: dict[str, Any] = field(default_factory=dict)
    location: tuple[str, int] = ("", 0)


class FrameworkScope(str):
    """A name scope that is also one op of the framework the model came from (an ONNX node):
    the graph builder gives it a debug context of its own, op ``op`` (``onnx::Conv``), which
    every context created inside belongs to, so Operations can group by framework op. Its
    ``args`` are that context's (an exported node's module and source line, say)."""

    op: str
    args: dict[str, Any]

    def __new__(cls, name: str, op: str, args: dict[str, Any] | None = None) -> FrameworkScope:
        scope = super().__new__(cls, name)
        scope.op = op
        scope.args = dict(args or {})
        return scope


def current_scopes() -> tuple[str, ...]:
    return tuple(getattr(_scopes, "stack", ()))


@contextlib.contextmanager
def name_scope(name: str) -> Iterator[None]:
    """Name everything created inside: variables, compute sets, programs, library ops."""
    if not name or "/" in name:
        raise ValueError(f"a name scope must be a non-empty name without '/', got {name!r}")
    stack = getattr(_scopes, "stack", ())
    _scopes.stack = (*stack, name)
    try:
        yield
    finally:
        _scopes.stack = stack


def scoped_name(name: str) -> str:
    scopes = current_scopes()
    return "/".join((*scopes, name)) if scopes else name


@contextlib.contextmanager
def source_location(location: tuple[str, int]) -> Iterator[None]:
    """Attribute everything created inside to ``location``: a traced op's line in user code,
    recorded when the op was traced and long gone from the stack when its graph is built."""
    outer = getattr(_scopes, "location", None)
    _scopes.location = location
    try:
        yield
    finally:
        _scopes.location = outer


def caller_location() -> tuple[str, int]:
    """The first frame outside ipu_engine: the user's line that asked for this."""
    override = getattr(_scopes, "location", None)
    if override is not None:
        return override
    frame = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE_DIR)
        or frame.f_code.co_filename in _SKIPPED_FILES
    ):
        frame = frame.f_back
    if frame is None:
        return ("", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


class DebugContexts:
    """The debug contexts of one graph, in creation order (ids are list positions)."""

    def __init__(self) -> None:
        self.items: list[DebugContext] = []
        self._op_stack: list[int] = []
        self._framework_stack: list[int] = []

    def add(self, name: str, api: str, args: dict[str, Any] | None = None, op: str = "") -> int:
        scopes = current_scopes()
        parent = self._op_stack[-1] if self._op_stack else -1
        full = "/".join((*scopes, name) if name else scopes)
        if parent >= 0:
            full = f"{self.items[parent].name}/{name}" if name else self.items[parent].name
        elif self._framework_stack:  # named by its scopes, as outside any framework op
            parent = self._framework_stack[-1]
        if parent >= 0 and not op:
            op = self.items[parent].op
        ctx = DebugContext(
            id=len(self.items),
            name=full,
            parent=parent,
            layer=scopes[0] if scopes else "",
            op=op,
            api=api,
            args=dict(args or {}),
            location=caller_location(),
        )
        self.items.append(ctx)
        return ctx.id

    @contextlib.contextmanager
    def op(self, op: str, name: str, args: dict[str, Any] | None = None) -> Iterator[int]:
        """Everything created while a library op builds its vertices belongs to the op."""
        ctx = self.add(name or op.split("::")[-1], api=op, args=args, op=op)
        self._op_stack.append(ctx)
        try:
            yield ctx
        finally:
            self._op_stack.pop()

    @contextlib.contextmanager
    def framework_op(self, scope: FrameworkScope, context: int = -1) -> Iterator[int]:
        """Everything created inside belongs to framework op ``scope`` (whose name scope is
        the innermost one in force): its context ``context``, made now when -1."""
        if context < 0:
            context = self.add("", api=scope.op, args=getattr(scope, "args", None), op=scope.op)
        self._framework_stack.append(context)
        try:
            yield context
        finally:
            self._framework_stack.pop()

    def current_op(self) -> DebugContext | None:
        """The library op being built, if any."""
        return self.items[self._op_stack[-1]] if self._op_stack else None

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> DebugContext:
        return self.items[index]
