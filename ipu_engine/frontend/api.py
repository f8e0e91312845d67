"""``compile``, ``function`` and ``pipeline``: Python functions on numpy arrays, run on IPUs.

``compile(fn, [a, b, c])`` traces ``fn`` on placeholders shaped like the arrays, builds
the graph with the library ops, compiles an Engine and runs it. ``@function`` does the
same once per input signature and then only feeds, runs and reads on each call.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_engine.common.errors import GraphError
from ipu_engine.common.types import Type
from ipu_engine.frontend.available_memory import apply_model_proportion
from ipu_engine.frontend.feeds import host_output, micro_batch_shape
from ipu_engine.frontend.fusion import FusingGraph
from ipu_engine.frontend.ir import SOURCE_OPS, Node, Trace, pipeline_stage, tracing
from ipu_engine.frontend.ir_record import trace_record
from ipu_engine.frontend.options import Options, resolve
from ipu_engine.frontend.pipeline import (
    TimeStep,
    build_pipeline,
    is_pipelined,
    pipeline_stages,
)
from ipu_engine.frontend.replicated import build_replicated
from ipu_engine.frontend.session import DeviceSession, home_shards
from ipu_engine.frontend.traced import TracedTensor, element_type_of
from ipu_engine.poplar import journal
from ipu_engine.poplar.options import parse_options


@dataclass
class TracedFunction:
    """A traced function: its trace, the nodes it returns, and whether it returned one."""

    trace: Trace
    outputs: list[Node]
    single: bool


def trace_function(
    fn: Callable[..., Any],
    specs: Sequence[tuple[tuple[int, ...], Type]],
    options: Options,
    names: Sequence[str] | None = None,
) -> TracedFunction:
    """Run ``fn`` on placeholders of the given (shape, type) and record what it does."""
    pipelined = options.execution_strategy == "pipelined"
    trace = Trace(options.ipus_per_replica, options.target_text(), pipelined, options.partials_type)
    names = list(names or _argument_names(fn, len(specs)))
    with tracing(trace):
        placeholders = [
            TracedTensor(trace, trace.input(shape, elem_type, names[i]))
            for i, (shape, elem_type) in enumerate(specs)
        ]
        result = fn(*placeholders)
    single = not isinstance(result, tuple | list)
    values = [result] if single else list(result)
    for v in values:
        if not isinstance(v, TracedTensor) or v.trace is not trace:
            raise GraphError(
                f"{getattr(fn, '__name__', 'the function')} must return tensors computed from "
                f"its inputs (or a tuple of them), not {type(v).__name__}"
            )
    apply_model_proportion(trace, options.available_memory_proportion)
    return TracedFunction(trace, [v.node for v in values], single)


def _argument_names(fn: Callable[..., Any], count: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    plain = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [plain[i] if i < len(plain) else f"input{i}" for i in range(count)]


def build_program(
    traced: TracedFunction, options: Options, ipus: int, name: str
) -> tuple[FusingGraph, Any]:
    """The graph and built program of a traced function (no engine yet): what a
    ``CompiledProgram`` and a what-if's replay (``ipu_engine.replan``) both build."""
    graph = FusingGraph(options.device(ipus).target)
    build = build_pipeline if is_pipelined(traced.trace) else build_replicated
    with journal.paused():
        built = build(
            graph,
            traced.trace,
            traced.outputs,
            options.replication_factor,
            ipus,
            options.device_iterations,
            name,
            options.target_text(),
        )
    return graph, built


def ipus_used(traced: TracedFunction) -> int:
    shards = [n.shard for n in traced.trace.nodes if n.op not in SOURCE_OPS]
    shards += list(home_shards(traced.trace).values())
    return max(shards, default=0) + 1


class CompiledProgram:
    """A traced function built into an Engine on its device; call it with host arrays."""

    def __init__(
        self, traced: TracedFunction, options: Options, name: str, kind: str = "function"
    ) -> None:
        self.traced = traced
        self.options = options
        ipus = options.ipus_per_replica or ipus_used(traced)
        self.device = options.device(ipus)
        self.graph, self.built = build_program(traced, options, ipus, name)
        framework = options.framework_info(kind, ipus, pipeline_stages(traced.trace))
        engine_options = options.engine_options_with_cache()

        def graph_record() -> tuple[dict, dict]:
            instrument = parse_options(engine_options).instrument
            return trace_record(
                traced.trace, traced.outputs, traced.single, kind, name, options, instrument
            )

        self.session = DeviceSession(
            self.graph, self.built, self.device, engine_options, framework, graph_record
        )
        self.session.write_params(traced.trace.weights())

    @property
    def engine(self) -> Any:
        return self.session.engine

    @property
    def schedule(self) -> list[TimeStep] | None:
        """A pipeline's time steps (ramp-up, steady state, ramp-down); None if not pipelined."""
        return self.built.extra.get("schedule")  # type: ignore[return-value]

    def __call__(self, arrays: Sequence[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
        flat = self.session.run(arrays)
        outs = tuple(
            host_output(values, self.built.copies_per_run, feed)
            for values, feed in zip(flat, self.built.outfeeds, strict=True)
        )
        return outs[0] if self.traced.single else outs


class CompiledFunction:
    """``@ipu_engine.function``: compiled once per input signature, then fed and run."""

    def __init__(
        self,
        fn: Callable[..., Any],
        options: Options,
        before_run: Callable[[CompiledProgram], None] | None = None,
        kind: str = "function",
    ) -> None:
        self.fn = fn
        self.kind = kind  # what the report names it: a function, or an inference model
        self.options = options
        self.before_run = before_run
        self.programs: dict[tuple, CompiledProgram] = {}
        self.last: CompiledProgram | None = None
        functools.update_wrapper(self, fn)

    def __call__(self, *inputs: Any) -> np.ndarray | tuple[np.ndarray, ...]:
        arrays = [np.asarray(a) for a in inputs]
        per_call = self.options.device_iterations * self.options.replication_factor
        counts = (
            f"device_iterations={self.options.device_iterations} x "
            f"replication_factor={self.options.replication_factor}"
        )
        names = _argument_names(self.fn, len(arrays))
        specs = tuple(
            (
                micro_batch_shape(a, per_call, f"input {names[i]!r}", counts),
                element_type_of(a.dtype),
            )
            for i, a in enumerate(arrays)
        )
        program = self.programs.get(specs)
        if program is None:
            traced = trace_function(self.fn, specs, self.options, names)
            name = self.options.name or getattr(self.fn, "__name__", "function").strip("<>")
            program = self.programs[specs] = CompiledProgram(traced, self.options, name, self.kind)
        self.last = program
        if self.before_run is not None:
            self.before_run(program)
        return program(arrays)


def function(
    fn: Callable[..., Any] | None = None, *, options: Options | None = None, **overrides: Any
) -> Any:
    """Decorator: ``@function`` or ``@function(num_ipus=4, device_iterations=8, ...)``."""
    opts = resolve(options, overrides)
    if fn is None:
        return lambda f: CompiledFunction(f, opts)
    return CompiledFunction(fn, opts)


def compile(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    options: Options | None = None,
    **overrides: Any,
) -> np.ndarray | tuple[np.ndarray, ...]:
    """Trace ``fn`` on placeholders like ``inputs``, build, compile and run it once."""
    return CompiledFunction(fn, resolve(options, overrides))(*inputs)


def pipeline(
    stages: Sequence[Callable[..., Any]],
    ipus: Sequence[int] | None = None,
    options: Options | None = None,
    **overrides: Any,
) -> CompiledFunction:
    """A function running ``stages`` as a pipeline, stage k on IPU ``ipus[k]`` (default k).

    Each call's inputs hold ``device_iterations`` micro-batches along their first axis;
    each stage takes the previous one's results (a tuple is spread over its arguments).
    """
    stages = list(stages)
    if not stages:
        raise GraphError("a pipeline needs at least one stage")
    if ipus is not None and len(ipus) != len(stages):
        raise GraphError(f"{len(stages)} pipeline stages but {len(ipus)} IPUs given for them")

    def pipelined(*inputs: Any) -> Any:
        values: tuple = inputs
        for k, stage_fn in enumerate(stages):
            with pipeline_stage(k, ipu=None if ipus is None else ipus[k]):
                result = stage_fn(*values)
            values = tuple(result) if isinstance(result, tuple | list) else (result,)
        return values[0] if len(values) == 1 else values

    opts = resolve(options, overrides)
    with contextlib.suppress(TypeError, ValueError):  # the first stage's arguments name inputs
        pipelined.__signature__ = inspect.signature(stages[0])  # type: ignore[attr-defined]
    pipelined.__name__ = opts.name or "pipeline"
    return CompiledFunction(pipelined, opts)
