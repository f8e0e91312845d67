"""The engine's public surface and a well-formed call of each, for the wrong-type sweep
(test_wrong_types.py): Graph, Engine and Tensor methods, popops / poplin / popnn / poputil
functions, program constructors, the front end's nn layers and the pvti API and metrics. Each call's other arguments are the
well-formed ones below (found by parameter name), so a wrong-typed value in one argument
is what the function meets."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import ipu_engine.poplar.program as program_module
import ipu_engine.pvti as pvti
from ipu_engine import (
    Engine,
    Graph,
    IPUModel,
    ipu_hardware,
    poplin,
    popnn,
    popops,
    poputil,
)
from ipu_engine.frontend import nn
from ipu_engine.poplar.tensor import Tensor
from tests.ipu_engine.wrong_type_values import Context, Zero, loaded_engine


@dataclass(frozen=True)
class Target:
    """One public function: how to reach it from a fresh Context, and its parameters."""

    name: str
    get: Callable[[Context], Callable[..., Any]]
    signature: inspect.Signature


def _functions(module: ModuleType) -> list[Target]:
    names = getattr(module, "__all__", None) or dir(module)
    found = []
    for name in sorted(names):
        obj = getattr(module, name)
        if name.startswith("_") or not inspect.isfunction(obj):
            continue
        if not obj.__module__.startswith(module.__name__):
            continue  # imported helpers (popnn's view of Graph, Tensor...) are listed once
        found.append(Target(f"{module.__name__}.{name}", lambda _c, o=obj: o, _sig(obj)))
    return found


def _sig(fn: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(fn)


def _methods(cls: type, get: Callable[[Context], Any], skip: set[str]) -> list[Target]:
    found = []
    for name, fn in sorted(inspect.getmembers(cls, inspect.isfunction)):
        if name.startswith("_") or name in skip:
            continue
        sig = _sig(fn)
        params = list(sig.parameters.values())[1:]  # without self
        found.append(
            Target(
                f"{cls.__name__}.{name}",
                lambda c, n=name: getattr(get(c), n),
                sig.replace(parameters=params),
            )
        )
    return found


PROGRAMS = ("Call", "Copy", "Execute", "If", "PrintTensor", "Repeat", "RepeatWhileFalse",
            "RepeatWhileTrue", "Sequence", "Sync", "WriteUndef")  # fmt: skip
PVTI = ("Graph", "HeatmapDouble", "HeatmapInt64", "Series", "TraceChannel", "Tracepoint",
        "check_trace_channel", "create_trace_channel", "disable_trace_channel",
        "enable_trace_channel", "instrument", "instrument_fn", "ipu_track_span",
        "ipu_track_spans", "enable")  # fmt: skip


TENSOR_HELPERS = {"flat_addr", "flat_index", "pool_range", "row_starts"}  # engine-internal


def _library_targets() -> list[Target]:
    """Tensor views, the front end's layers and the pvti metrics' methods."""
    targets = _methods(Tensor, lambda c: c.t["m23"], TENSOR_HELPERS)
    getitem = inspect.Signature([inspect.Parameter("key", inspect.Parameter.POSITIONAL_ONLY)])
    targets.append(Target("Tensor.__getitem__", lambda c: c.t["m23"].__getitem__, getitem))
    for name in ("Linear", "Sequential", "begin_block"):
        obj = getattr(nn, name)
        targets.append(Target(f"nn.{name}", lambda _c, o=obj: o, inspect.signature(obj)))
    layer = lambda _c: nn.Linear(3, 2, name="fc")  # noqa: E731
    for name in ("to", "load_parameters"):
        sig = _sig(getattr(nn.Layer, name))
        params = list(sig.parameters.values())[1:]
        targets.append(
            Target(
                f"nn.Layer.{name}",
                lambda c, n=name: getattr(layer(c), n),
                sig.replace(parameters=params),
            )
        )
    metric_objects = {
        "Series": lambda _c: pvti.Graph("g").addSeries("s"),
        "Graph": lambda _c: pvti.Graph("g"),
        "HeatmapDouble": lambda _c: pvti.HeatmapDouble("h", [0.0, 1.0]),
        "HeatmapInt64": lambda _c: pvti.HeatmapInt64("h", [0, 1]),
    }
    for cls_name, get in metric_objects.items():
        targets += [
            dataclasses.replace(t, name=f"pvti.{t.name}")
            for t in _methods(getattr(pvti, cls_name), get, {"bucket_counts"})
        ]
    return targets


def public_targets() -> list[Target]:
    targets = _methods(Graph, lambda c: c.graph, {"pool"})
    targets += _methods(Engine, _engine, set())
    targets.append(Target("Engine", lambda _c: Engine, inspect.signature(Engine)))
    targets.append(Target("Graph", lambda _c: Graph, inspect.signature(Graph)))
    targets.append(Target("IPUModel", lambda _c: IPUModel, inspect.signature(IPUModel)))
    targets.append(Target("ipu_hardware", lambda _c: ipu_hardware, inspect.signature(ipu_hardware)))
    targets += _methods(IPUModel, lambda _c: IPUModel("ipu2", tiles_per_ipu=4), set())
    for module in (popops, poplin, popnn, poputil):
        targets += _functions(module)
    for name in PROGRAMS:
        cls = getattr(program_module, name)
        targets.append(Target(name, lambda _c, k=cls: k, inspect.signature(cls)))
    for name in PVTI:
        obj = getattr(pvti, name)
        targets.append(Target(f"pvti.{name}", lambda _c, o=obj: o, inspect.signature(obj)))
    return targets + _library_targets()


def _engine(ctx: Context) -> Engine:
    if ctx.engine is None:
        ctx.engine = loaded_engine()
    return ctx.engine


def arguments(target: Target, ctx: Context) -> tuple[list[Any], dict[str, Any], list[str]]:
    """Well-formed positional and keyword arguments of ``target``, and the names that can
    take a wrong value (``*args`` gets one well-formed item)."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    names = []
    short = target.name.rsplit(".", 1)[-1]
    for p in target.signature.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            continue
        value = ctx.value(p.name, short)
        if p.kind is p.VAR_POSITIONAL:
            if p.name in ("programs", "sources", "tensors", "layers"):
                one = {"programs": ctx.prog, "sources": Zero, "layers": nn.ReLU()}
                args.append(one.get(p.name, ctx.t["a"]))
                names.append(f"*{p.name}")
            continue
        if value is None and p.default is not p.empty:
            value = p.default
        names.append(p.name)
        if p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    return args, kwargs, names


def call_with(target: Target, ctx: Context, name: str, wrong: Any) -> Any:
    """``target`` called with ``wrong`` in argument ``name``, the rest well-formed."""
    args, kwargs, names = arguments(target, ctx)
    fn = target.get(ctx)
    position = 0
    for p in names:
        if p == name:
            break
        if p not in kwargs:
            position += 1
    if name in kwargs:
        kwargs[name] = wrong
    else:
        args[position] = wrong
    return fn(*args, **kwargs)
