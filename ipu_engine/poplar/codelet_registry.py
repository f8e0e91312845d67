"""The built-in codelets' register: each library codelet class (``ipu_engine.codelets``)
registers under its Poplar-style type name (``popops::BinaryOp1D<ADD,float>``) when made,
so a graph finds it by name without ``add_codelets``, as Poplar's are found."""

from __future__ import annotations

from ipu_engine.poplar.vertex import Vertex

_BUILTIN: dict[str, type[Vertex]] = {}


def register_builtin(cls: type[Vertex]) -> type[Vertex]:
    cls.builtin = True
    _BUILTIN[cls.type_name] = cls
    return cls


def builtin_codelet(name: str) -> type[Vertex] | None:
    return _BUILTIN.get(name)


def builtin_codelets() -> dict[str, type[Vertex]]:
    return dict(_BUILTIN)
