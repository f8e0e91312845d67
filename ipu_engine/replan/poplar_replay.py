"""Replaying a Poplar program's record (the calls ``ipu_engine.poplar.journal`` kept) on a
new graph, with one change applied to the calls it concerns: an op call's
``availableMemoryProportion`` option, or variables made half. Only the APIs the journal
recorded (its ``REGISTRY``) are called; the record is data, so nothing else runs."""

from __future__ import annotations

import collections
import contextlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

import ipu_engine.poplar.program
import ipu_engine.poplin
import ipu_engine.popnn
import ipu_engine.popops
import ipu_engine.poputil  # noqa: F401 - these register their recorded APIs when imported
from ipu_engine.common.errors import EngineError
from ipu_engine.common.types import HALF
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.journal import REGISTRY, paused
from ipu_engine.poplar.target import CycleSettings, Target
from ipu_engine.poplar.virtual_graph import on_tiles
from ipu_engine.replan.changes import AMP, TYPE, Change
from ipu_engine.replan.decode import Decoder, ReplanError

PLANNED_APIS = frozenset({"poplin.mat_mul", "poplin.mat_mul_grouped", "poplin.convolution"})
MADE_VARIABLES = frozenset({"Graph.add_variable", "Graph.add_constant"})


@dataclass
class Replayed:
    """A graph and an engine's programs made again, ready to compile."""

    graph: Graph
    programs: list[Any]
    instrument: bool
    framework: str = ""  # what built it, for the words of a prediction


def target_of(raw: Any) -> Target:
    """The ``Target`` a record names (its fields and cycle settings)."""
    if not isinstance(raw, dict):
        raise ReplanError("the record names no target")
    own = {f.name for f in fields(Target)} - {"cycles"}
    settings = {f.name for f in fields(CycleSettings)}
    cycles = raw.get("cycles", {})
    if set(raw) - own - {"cycles"} or not isinstance(cycles, dict) or set(cycles) - settings:
        raise ReplanError(f"the record's target {raw!r:.120} is not a target")
    try:
        return Target(**{k: raw[k] for k in own}, cycles=CycleSettings(**cycles).check())
    except (KeyError, TypeError, EngineError) as error:
        raise ReplanError(f"the record's target is not a target: {error}") from None


def _invoke(fn: Callable[..., Any], args: dict[str, Any], where: str) -> Any:
    signature = inspect.signature(fn)
    unknown = set(args) - set(signature.parameters)
    if unknown:
        raise ReplanError(f"{where}: {fn.__qualname__} takes no argument {sorted(unknown)[0]!r}")
    ordered = collections.OrderedDict((k, args[k]) for k in signature.parameters if k in args)
    bound = inspect.BoundArguments(signature, ordered)
    return fn(*bound.args, **bound.kwargs)


@contextlib.contextmanager
def _tiles(graph: Graph, tiles: Any) -> Iterator[None]:
    if tiles is None:
        yield
        return
    if not (isinstance(tiles, list) and len(tiles) == 2 and all(isinstance(t, int) for t in tiles)):
        raise ReplanError(f"a call's tiles {tiles!r:.60} are not [first, stop]")
    with on_tiles(graph, range(*tiles)):
        yield


def _named(name: Any, operation: str) -> bool:
    return (
        isinstance(name, str)
        and bool(name)
        and (name == operation or operation.endswith(f"/{name}") or name.endswith(f"/{operation}"))
    )


def apply_change(change: Change, api: str, args: dict[str, Any]) -> bool:
    """Change ``args`` of one call if ``change`` concerns it; whether it did."""
    if (
        change.option == AMP
        and api in PLANNED_APIS
        and _named(args.get("debug_prefix"), change.operation)
    ):
        options = dict(args.get("options") or {})
        options["availableMemoryProportion"] = float(change.value)
        args["options"] = options
        return True
    if change.option == TYPE and api in MADE_VARIABLES and args.get("name") in change.tensors:
        args["dtype"] = HALF
        if api == "Graph.add_constant" and isinstance(args.get("values"), np.ndarray):
            args["values"] = args["values"].astype(np.float16)
        return True
    return False


def replay_poplar(
    record: dict[str, Any], arrays: dict[str, np.ndarray], change: Change | None
) -> Replayed:
    """The record's graph and programs made again with ``change`` (None: as recorded)."""
    if record.get("problems"):
        raise ReplanError(f"the record cannot be replayed: {record['problems'][0]}")
    if change is not None and change.option not in (AMP, TYPE):
        raise ReplanError(
            f"{change.option} cannot be planned for a Poplar program: it maps its tensors to "
            "tiles itself, so moving work between IPUs or stages is a change to its code"
        )
    graph = Graph(target_of(record.get("target")))
    graph.journal = None
    results: dict[int, Any] = {}

    def ref(seq: int, index: int) -> Any:
        if seq not in results:
            raise ReplanError(f"a value refers to call {seq}, which has not run before it")
        made = results[seq]
        if index < 0:
            return made
        try:
            return made[index]
        except (IndexError, TypeError, KeyError):
            raise ReplanError(f"call {seq} returned no result {index}") from None

    decoder = Decoder(arrays, graph, ref)
    applied = False
    for call in record["calls"]:
        seq, api = call["seq"], call["api"]
        where = f"call {seq} ({api})"
        fn = REGISTRY.get(api)
        if fn is None:
            raise ReplanError(f"{where}: not an API a replay may call")
        args = decoder.value(call["args"], where)
        named = args.get("debug_prefix") or args.get("name")
        where = f"{where[:-1]} {named!r})" if isinstance(named, str) and named else where
        if change is not None:
            applied |= apply_change(change, api, args)
        try:
            with paused(), _tiles(graph, call.get("tiles")):
                results[seq] = _invoke(fn, args, where)
        except EngineError as error:
            raise ReplanError(f"{where}: {error}") from None
    if change is not None and not applied:
        what = "operation" if change.option == AMP else "tensor"
        names = change.operation if change.option == AMP else ", ".join(change.tensors)
        raise ReplanError(
            f"the program has no {what} named {names!r} that {change.option} concerns"
        )
    engine = record["engine"]
    programs = [decoder.value(p, "engine program") for p in engine.get("programs", [])]
    if not programs:
        raise ReplanError("the record names no engine program")
    return Replayed(graph, programs, bool(engine.get("instrument")), "Poplar program")
