"""Built-in codelets: the vertex types library ops use, each with a batched compute.

Codelet classes are made per operation and element type (``popops::BinaryOp1D<ADD,float>``)
and registered by their Poplar-style type name, so graphs find them without
``add_codelets``.
"""

from __future__ import annotations

from ipu_engine.vertex import Vertex

_BUILTIN: dict[str, type[Vertex]] = {}


def register_builtin(cls: type[Vertex]) -> type[Vertex]:
    cls.builtin = True
    _BUILTIN[cls.type_name] = cls
    return cls


def builtin_codelet(name: str) -> type[Vertex] | None:
    return _BUILTIN.get(name)


def builtin_codelets() -> dict[str, type[Vertex]]:
    return dict(_BUILTIN)
