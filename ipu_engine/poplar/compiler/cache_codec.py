"""What an executable cache entry holds, and its translation to and from an array bundle.

An entry keeps the derived results of compiling that cost time and are plain data: each
compute set's variables and exchange plans, each copy's exchange plan, and the compile
model (liveness, memory layout per tile, cycles, vertex counts). The control tree and its
closures are rebuilt from the graph on a hit, which is cheap once those facts are known.

Records become nested plain data with ``{"@": class name, field: value}`` and arrays by
path name. Decoding builds only the record classes listed in ``_RECORDS``, each with
exactly its own fields and a type check per field, so a file can never make us build
anything else: no pickle, no eval.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_engine.poplar.compiler.access_sets import ComputeSetFacts
from ipu_engine.poplar.compiler.known_facts import KnownFacts
from ipu_engine.poplar.cost_model.compile_model import CompileModel
from ipu_engine.poplar.cost_model.cycles import ComputeSetCycles
from ipu_engine.poplar.cost_model.exchange import ExchangePlan, ExchangeTraffic
from ipu_engine.poplar.cost_model.liveness import Liveness
from ipu_engine.poplar.cost_model.memory import TileMemory, VariableRegions
from ipu_engine.poplar.cost_model.vertex_memory import VertexCounts
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.vertex import Vertex


@dataclass
class CachedCompile:
    """One cache entry's content."""

    known: KnownFacts
    model: CompileModel


class EntryError(ValueError):
    """An entry whose content is not what this engine writes (the reason is the text)."""


_RECORDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        KnownFacts,
        CachedCompile,
        ComputeSetFacts,
        ExchangePlan,
        ExchangeTraffic,
        CompileModel,
        VariableRegions,
        Liveness,
        TileMemory,
        ComputeSetCycles,
        VertexCounts,
    )
}
_TYPES_FIELD = (VertexCounts, "types")  # codelet classes: stored by name


def encode_entry(entry: CachedCompile) -> tuple[Any, dict[str, np.ndarray]]:
    """(plain description, arrays by name) of ``entry``."""
    arrays: dict[str, np.ndarray] = {}
    return _encode(entry, "", arrays), arrays


def _encode(value: Any, path: str, arrays: dict[str, np.ndarray]) -> Any:
    if isinstance(value, np.ndarray):
        arrays[path] = value
        return {"@": "array", "name": path}
    if dataclasses.is_dataclass(value) and type(value).__name__ in _RECORDS:
        out: dict[str, Any] = {"@": type(value).__name__}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if (type(value), f.name) == _TYPES_FIELD:
                out[f.name] = [t.type_name for t in item]
            else:
                out[f.name] = _encode(item, f"{path}/{f.name}", arrays)
        return out
    if isinstance(value, dict):
        items = [[k, _encode(v, f"{path}/{k}", arrays)] for k, v in value.items()]
        return {"@": "dict", "items": items}
    if isinstance(value, list | tuple):
        return [_encode(v, f"{path}/{i}", arrays) for i, v in enumerate(value)]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"an executable cache entry cannot hold a {type(value).__name__} ({path})")


def decode_entry(meta: Any, arrays: dict[str, np.ndarray], graph: Graph) -> CachedCompile:
    """The entry described by ``meta``; ``EntryError`` when it is not one this engine
    writes. Arrays are copied out of the file's bytes, so the engine may change them."""
    codelets = {b.codelet.type_name: b.codelet for b in graph.vertex_blocks}
    entry = _decode(meta, arrays, codelets, 0)
    if not isinstance(entry, CachedCompile):
        raise EntryError("the entry is not a compiled executable")
    return entry


def _decode(value: Any, arrays: dict[str, np.ndarray], codelets: dict, depth: int) -> Any:
    if depth > 12:
        raise EntryError("the entry is nested too deeply")
    if isinstance(value, list):
        return [_decode(v, arrays, codelets, depth + 1) for v in value]
    if not isinstance(value, dict):
        if value is None or isinstance(value, bool | int | float | str):
            return value
        raise EntryError(f"unexpected {type(value).__name__} in the entry")
    kind = value.get("@")
    if kind == "array":
        name = value.get("name")
        if name not in arrays:
            raise EntryError(f"array {name!r:.80} is missing")
        return arrays[name].copy()
    if kind == "dict":
        items = value.get("items")
        if not isinstance(items, list) or not all(
            isinstance(i, list) and len(i) == 2 and isinstance(i[0], int) for i in items
        ):
            raise EntryError("a table of the entry is not [[number, value], ...]")
        return {k: _decode(v, arrays, codelets, depth + 1) for k, v in items}
    cls = _RECORDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EntryError(f"record kind {kind!r:.80} is not one the engine writes")
    return _record(cls, value, arrays, codelets, depth)


def _record(cls: type, value: dict, arrays: dict, codelets: dict, depth: int) -> Any:
    names = [f.name for f in dataclasses.fields(cls)]
    if set(value) != {"@", *names}:
        raise EntryError(f"a {cls.__name__} record has fields {sorted(value)[:12]}")
    kwargs = {}
    for f in dataclasses.fields(cls):
        raw = value[f.name]
        if (cls, f.name) == _TYPES_FIELD:
            kwargs[f.name] = _codelet_types(raw, codelets)
            continue
        item = _decode(raw, arrays, codelets, depth + 1)
        _check_field(cls, f, item)
        kwargs[f.name] = item
    return cls(**kwargs)


def _codelet_types(raw: Any, codelets: dict[str, type[Vertex]]) -> list[type[Vertex]]:
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise EntryError("the vertex types are not a list of names")
    missing = [n for n in raw if n not in codelets]
    if missing:
        raise EntryError(f"codelet {missing[0]!r:.80} is not in the graph")
    return [codelets[n] for n in raw]


_ANNOTATION_TYPES: dict[str, type | tuple[type, ...]] = {
    "np.ndarray": np.ndarray,
    "int": int,
    "bool": bool,
    "float": (int, float),
    "ExchangePlan": ExchangePlan,
    "ExchangeTraffic": ExchangeTraffic,
    "VariableRegions": VariableRegions,
    "Liveness": Liveness,
    "TileMemory": TileMemory,
    "VertexCounts": VertexCounts,
    "KnownFacts": KnownFacts,
    "CompileModel": CompileModel,
}


def _check_field(cls: type, f: dataclasses.Field, item: Any) -> None:
    """The field's value has its annotated type (containers: their outer type)."""
    annotation = str(f.type).split("[", 1)[0].strip()
    wanted = _ANNOTATION_TYPES.get(annotation)
    if annotation in ("dict", "list"):
        wanted = dict if annotation == "dict" else list
    if wanted is None:
        raise EntryError(f"{cls.__name__}.{f.name}: the entry format cannot check it")
    if (isinstance(item, bool) and wanted is int) or not isinstance(item, wanted):
        raise EntryError(f"{cls.__name__}.{f.name} holds a {type(item).__name__}")
