"""A graph's journal as data: the calls an engine's programs need, their arguments encoded
as plain values (numbers, texts, lists, maps) with tagged maps for the rest, and numeric
arrays set apart -- what ``autoReport.outputSerializedGraph`` writes for a Poplar program
(the file's layout is documented in ``profiler_core/formats/README.md``).

Tags: ``{"$graph": 0}`` the graph; ``{"$ref": [seq, i]}`` what call ``seq`` returned (its
``i``-th result, -1 for the result itself); ``{"$type": "float"}`` an element type;
``{"$array": name}`` an array of the record's arrays; ``{"$tuple": [...]}``,
``{"$slice": [start, stop, step]}``, ``{"$range": [...]}``, ``{"$ellipsis": 0}``; and
tags registered by the libraries above (``{"$expr": [...]}``, popops' expressions). A value
that is not data (a Python codelet class, a callback) makes the record say so by name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ipu_engine.common.types import Type
from ipu_engine.poplar.journal import Call

#: type -> (tag, encode): how the libraries above this floor encode their own values
ENCODERS: dict[type, tuple[str, Callable[[Any], Any]]] = {}

RECORD_KIND = "poplar"


def register_encoder(cls: type, tag: str, encode: Callable[[Any], Any]) -> None:
    ENCODERS[cls] = (tag, encode)


class ValueEncoder:
    """Encodes values as the module says; numeric arrays go to ``arrays``, and what is not
    data is named in ``problems``."""

    def __init__(self, graph: Any = None) -> None:
        self.graph = graph
        self.arrays: dict[str, np.ndarray] = {}
        self.problems: list[str] = []

    def array(self, value: np.ndarray, where: str) -> Any:
        if value.dtype.kind not in "biuf":
            self.problems.append(f"{where}: an array of {value.dtype} is not numeric data")
            return None
        name = f"a{len(self.arrays)}"
        self.arrays[name] = value
        return {"$array": name}

    def made(self, obj: Any, where: str) -> dict[str, Any] | None:
        self.problems.append(f"{where}: a {type(obj).__name__} cannot be kept in this record")
        return None

    def value(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, np.generic):
            return value.item()
        if self.graph is not None and value is self.graph:
            return {"$graph": 0}
        if isinstance(value, Type):
            return {"$type": value.name}
        if isinstance(value, np.ndarray):
            return self.array(value, where)
        if isinstance(value, tuple):
            return {"$tuple": [self.value(v, where) for v in value]}
        if isinstance(value, list):
            return [self.value(v, where) for v in value]
        if isinstance(value, dict):
            if not all(isinstance(k, str) and not k.startswith("$") for k in value):
                self.problems.append(f"{where}: a map whose keys are not plain texts")
                return None
            return {k: self.value(v, where) for k, v in value.items()}
        return self.special(value, where)

    def special(self, value: Any, where: str) -> Any:
        if isinstance(value, slice):
            return {"$slice": [self.value(v, where) for v in (value.start, value.stop, value.step)]}
        if isinstance(value, range):
            return {"$range": [value.start, value.stop, value.step]}
        if value is Ellipsis:
            return {"$ellipsis": 0}
        for cls, (tag, encode) in ENCODERS.items():
            if isinstance(value, cls):
                return {f"${tag}": encode(value)}
        if hasattr(value, "made_by") or hasattr(type(value), "made_by"):
            return self.made(value, where)
        self.problems.append(
            f"{where}: a {type(value).__name__} is not data a record can keep (a replay would "
            "have to run code)"
        )
        return None


class _JournalEncoder(ValueEncoder):
    """Encodes the calls reachable from a graph and its engine's programs."""

    def __init__(self, graph: Any) -> None:
        super().__init__(graph)
        self.problems = list(graph.journal.problems)
        self.included: dict[int, dict[str, Any]] = {}
        self.queue: list[Call] = []

    def include(self, call: Call) -> None:
        if call.seq in self.included:
            return
        self.included[call.seq] = {}  # placeholder: encoding may refer back to it
        self.queue.append(call)

    def drain(self) -> None:
        while self.queue:
            call = self.queue.pop()
            where = f"{call.api} (call {call.seq})"
            entry: dict[str, Any] = {
                "seq": call.seq,
                "api": call.api,
                "args": {k: self.value(v, f"{where}: {k}") for k, v in call.arguments.items()},
            }
            if call.tile_range is not None:
                entry["tiles"] = list(call.tile_range)
            self.included[call.seq] = entry

    def made(self, obj: Any, where: str) -> dict[str, Any] | None:
        made_by = getattr(obj, "made_by", None)
        if made_by is None:
            self.problems.append(
                f"{where}: {type(obj).__name__} {getattr(obj, 'name', '')!r} was made by a call "
                "the record does not keep"
            )
            return None
        call, index = made_by
        self.include(call)
        for later in getattr(obj, "journal_log", ()):  # what was added to a program
            self.include(later)
        return {"$ref": [call.seq, index]}


def journal_record(
    graph: Any, programs: Iterable[Any], instrument: bool
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The record of ``graph`` and an engine's ``programs``, and its arrays."""
    encoder = _JournalEncoder(graph)
    for call in graph.journal.calls:
        encoder.include(call)
    roots = [encoder.made(p, f"engine program {i}") for i, p in enumerate(programs)]
    encoder.drain()
    record = {
        "kind": RECORD_KIND,
        "target": dataclasses.asdict(graph.target),
        "calls": [encoder.included[seq] for seq in sorted(encoder.included)],
        "engine": {"programs": roots, "instrument": bool(instrument)},
        "problems": list(dict.fromkeys(encoder.problems)),
    }
    return record, encoder.arrays
