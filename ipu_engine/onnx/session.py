"""``InferenceSession``: an ONNX model run on the IPU engine with onnxruntime's face.

The model's nodes are lowered inside a function the front-end traces (``trace_function``)
and compiles (``CompiledProgram``), so sharding, pipelining, replication, device
iterations, autoReport and PVTI apply as to any framework program; the report is named
after the graph. One program is compiled per input signature.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from ipu_engine.common.errors import EngineError, OnnxError
from ipu_engine.common.types import FLOAT, HALF
from ipu_engine.frontend.api import CompiledProgram, trace_function
from ipu_engine.frontend.ir import current_trace
from ipu_engine.frontend.options import Options
from ipu_engine.frontend.traced import TracedTensor
from ipu_engine.onnx.lowering.common import computing_in, device_type
from ipu_engine.onnx.lowering.walk import (
    check_supported,
    host_fed_inputs,
    lower_graph,
    placements,
)
from ipu_engine.onnx.model import OnnxModel, ValueSpec, load_model

_FLOAT_TYPES = {"float32": FLOAT, "float16": HALF}
_OPTION_KEYS = (
    "engine_options", "ipu_version", "tiles_per_ipu", "name", "available_memory_proportion",
    "partials_type",
)  # fmt: skip


@dataclass
class _Program:
    """One input signature's compiled program and the outputs known without running."""

    compiled: CompiledProgram | None
    traced_outputs: list[str]  # the outputs the engine computes, in its outfeed order
    host_outputs: dict[str, np.ndarray]


class InferenceSession:
    """``InferenceSession(model, ipus=1, replication_factor=1, batches_per_step=1,
    options=None, base_dir=None)``; ``run(output_names_or_None, {input_name: array}) ->
    [array, ...]``.

    ``base_dir``: the folder of the weights a model given as bytes or a ModelProto keeps
    outside it (``model.onnx.data``); a model given as a path finds them beside its file.

    ``options``: ``engine_options`` (Poplar's, e.g. autoReport), ``ipu_version``,
    ``tiles_per_ipu``, ``name`` (the report folder), ``dtype`` ("float32"),
    ``available_memory_proportion`` (the whole model's, a float or {"IPU0": p}; a node's
    PopART attribute ``__available_memory_proportion`` wins for its matmuls and convolutions),
    ``partials_type`` ("float" or "half": what half matmul and convolution products
    accumulate in, PopART's ``partialsTypeMatMuls``).
    ``ipus`` > 1 without PopART attributes splits the nodes into that many consecutive
    groups of about equal weight bytes: shards, or pipeline stages when
    ``batches_per_step`` > 1 gives them micro-batches to overlap.
    """

    def __init__(
        self,
        model: str | os.PathLike | onnx.ModelProto | bytes,
        *,
        ipus: int | None = None,
        replication_factor: int = 1,
        batches_per_step: int = 1,
        options: Mapping[str, Any] | None = None,
        base_dir: str | os.PathLike | None = None,
    ) -> None:
        self.model: OnnxModel = load_model(model, base_dir)
        check_supported(self.model)
        opts = dict(options or {})
        dtype = str(opts.pop("dtype", "float32"))
        if dtype not in _FLOAT_TYPES:
            raise OnnxError(
                f"{self.model.source}: option dtype={dtype!r}: the model computes in "
                f"{' or '.join(repr(k) for k in _FLOAT_TYPES)}"
            )
        #: what the model's floats compute in (half: weights, activations and float outputs
        #: are float16, as PopART's half conversion makes them)
        self.float_type = _FLOAT_TYPES[dtype]
        unknown = sorted(set(opts) - set(_OPTION_KEYS))
        if unknown:
            raise OnnxError(
                f"unknown InferenceSession option {unknown[0]!r}; known: "
                f"{sorted((*_OPTION_KEYS, 'dtype'))}"
            )
        attributed = self._attributed_ipus()
        self.ipus = int(ipus if ipus is not None else max(attributed, 1))
        if self.ipus < 1 or self.ipus < attributed:
            raise OnnxError(
                f"{self.model.source}: ipus={self.ipus} but the model's __ipu_number attributes "
                f"place nodes on {attributed} IPUs"
            )
        opts.setdefault("name", self.model.name)
        self.options = Options(
            num_ipus=self.ipus * replication_factor,
            device_iterations=batches_per_step,
            replication_factor=replication_factor,
            **opts,
        )
        self.placement = placements(self.model, self.ipus, pipelined=batches_per_step > 1)
        #: inputs a node needs as values when the model compiles (Resize's scales): each
        #: value fed is part of the program's signature, one program per value
        self.host_fed = host_fed_inputs(self.model)
        per_call = self.options.device_iterations * self.options.replication_factor
        if self.host_fed and per_call > 1:
            name, node = next(iter(self.host_fed.items()))
            raise OnnxError(
                f"{self.model.source}: input {name!r} is read by node {node!r} as a value the "
                "program is compiled for; feed it once per call (batches_per_step and "
                "replication_factor 1), or make it an initializer"
            )
        self._programs: dict[tuple, _Program] = {}
        self.last: CompiledProgram | None = None

    def _attributed_ipus(self) -> int:
        """The IPUs PopART's attributes ask for: a node's __ipu_number, else its
        __pipeline_stage (a stage runs on the IPU of its number)."""
        most = 0
        for node in self.model.graph.node:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            ipu = attrs.get("__ipu_number", attrs.get("__pipeline_stage"))
            if ipu is not None:
                most = max(most, int(ipu) + 1)
        return most

    # -- onnxruntime's introspection ---------------------------------------------------------
    def get_inputs(self) -> list[ValueSpec]:
        return list(self.model.inputs)

    def get_outputs(self) -> list[ValueSpec]:
        return list(self.model.outputs)

    # -- running --------------------------------------------------------------------------
    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, Any]) -> list[np.ndarray]:
        arrays = self._checked_feeds(feeds)
        wanted = (
            [o.name for o in self.model.outputs] if output_names is None else list(output_names)
        )
        known = {o.name for o in self.model.outputs}
        for name in wanted:
            if name not in known:
                raise OnnxError(
                    f"{self.model.source}: {name!r} is not an output of the model; outputs: "
                    f"{sorted(known)}"
                )
        per_call = self.options.device_iterations * self.options.replication_factor
        fixed = {
            s.name: a
            for s, a in zip(self.model.inputs, arrays, strict=True)
            if s.name in self.host_fed
        }
        streamed = [
            a for s, a in zip(self.model.inputs, arrays, strict=True) if s.name not in fixed
        ]
        key = tuple((a.shape, a.dtype.str) for a in arrays) + tuple(
            a.tobytes() for a in fixed.values()
        )
        program = self._programs.get(key)
        if program is None:
            with computing_in(self.float_type):
                program = self._programs[key] = self._build(streamed, fixed, per_call)
        values = dict(program.host_outputs)
        fresh: set[str] = set()  # arrays made for this run: returned without a copy
        if program.compiled is not None:
            self.last = program.compiled
            try:
                result = program.compiled(streamed)
            except OnnxError:
                raise
            except EngineError as exc:  # an out-of-memory engine kept for its report, ...
                raise OnnxError(f"{self.model.source}: {exc}") from exc
            results = (result,) if isinstance(result, np.ndarray) else result
            values.update(zip(program.traced_outputs, results, strict=True))
            fresh.update(program.traced_outputs)
        types = {o.name: self._output_dtype(o.dtype) for o in self.model.outputs}
        # an output known without running is the program's own array: each caller a copy
        return [
            np.asarray(values[name]).astype(
                types[name], copy=name not in fresh or wanted.count(name) > 1
            )
            for name in wanted
        ]

    def _output_dtype(self, declared: np.dtype) -> np.dtype:
        """A float output of a model computed in half comes back in half; else as declared."""
        half = declared.kind == "f" and self.float_type == HALF
        return np.dtype(np.float16) if half else declared

    def _checked_feeds(self, feeds: Mapping[str, Any]) -> list[np.ndarray]:
        source = self.model.source
        if not isinstance(feeds, Mapping):
            raise OnnxError(f"{source}: feeds must be a dict {{input name: array}}")
        names = [i.name for i in self.model.inputs]
        extra = sorted(set(feeds) - set(names))
        if extra:
            raise OnnxError(f"{source}: {extra[0]!r} is not an input of the model; inputs: {names}")
        per_call = self.options.device_iterations * self.options.replication_factor
        arrays = []
        for spec in self.model.inputs:
            if spec.name not in feeds:
                raise OnnxError(
                    f"{source}: no feed for input {spec.name!r} ({spec.type} "
                    f"{_shape_text(spec.shape)}); feeds given: {sorted(feeds)}"
                )
            array = np.asarray(feeds[spec.name])
            if array.dtype != spec.dtype:
                raise OnnxError(
                    f"{source}: input {spec.name!r} must be {spec.dtype.name}, got "
                    f"{array.dtype.name}; convert it with .astype(np.{spec.dtype.name})"
                )
            _check_shape(source, spec, array.shape, per_call)
            streamed = spec.name not in self.host_fed  # values the program is made for stay
            if array.dtype.kind == "f" and self.float_type == HALF and streamed:
                array = array.astype(np.float16)
            arrays.append(array)
        return arrays

    def _build(
        self, arrays: list[np.ndarray], fixed: dict[str, np.ndarray], per_call: int
    ) -> _Program:
        """The program for streamed inputs like ``arrays`` and ``fixed`` inputs' values."""
        model = self.model
        streamed = [s for s in model.inputs if s.name not in fixed]
        specs = [
            (
                (a.shape[0] // per_call, *a.shape[1:]) if per_call > 1 else a.shape,
                device_type(a.dtype),
            )
            for a in arrays
        ]
        found: dict[str, Any] = {}

        def onnx_graph(*placeholders: TracedTensor) -> tuple[TracedTensor, ...]:
            trace = placeholders[0].trace if placeholders else current_trace()
            if trace is not None:
                # weights made for the matmul reading them, as PopART makes initializers
                trace.weights_in_op_layout = True
            if trace is not None and self.float_type == HALF:
                trace.host_floats_follow = True  # float32 constants meet half values as half
            env: dict[str, Any] = dict(model.initializers)
            env.update(fixed)
            env.update({s.name: p for s, p in zip(streamed, placeholders, strict=True)})
            lower_graph(model, env, self.placement)
            found.update({o.name: env[o.name] for o in model.outputs})
            outs = tuple(v for v in found.values() if isinstance(v, TracedTensor))
            if not outs:  # every output known on the host: nothing to run on the IPU
                raise _NothingToRunError
            return outs

        names = [s.name for s in streamed]
        try:
            traced = trace_function(onnx_graph, specs, self.options, names)
        except _NothingToRunError:
            host = {k: _per_call(np.asarray(v), per_call) for k, v in found.items()}
            return _Program(None, [], host)
        traced_names = [k for k, v in found.items() if isinstance(v, TracedTensor)]
        host = {
            k: _per_call(np.asarray(v), per_call)
            for k, v in found.items()
            if not isinstance(v, TracedTensor)
        }
        try:
            compiled = CompiledProgram(
                traced, self.options, self.options.name or model.name, "onnx"
            )
        except OnnxError:
            raise
        except EngineError as exc:
            raise OnnxError(f"{model.source}: {exc}") from exc
        return _Program(compiled, traced_names, host)


class _NothingToRunError(Exception):
    pass


def _per_call(value: np.ndarray, per_call: int) -> np.ndarray:
    """A host-known output repeated for every micro-batch of the call, as traced ones are."""
    if per_call == 1 or value.ndim == 0:
        return value
    return np.concatenate([value] * per_call, axis=0)


def _shape_text(shape: tuple | None) -> str:
    if shape is None:
        return "[unknown shape]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _check_shape(source: str, spec: ValueSpec, shape: tuple[int, ...], per_call: int) -> None:
    if 0 in shape:  # an IPU program streams every input: an empty one has nothing to stream
        raise OnnxError(f"{source}: input {spec.name!r} has no elements (shape {list(shape)})")
    if spec.shape is None:
        return
    expected = list(spec.shape)
    if per_call > 1 and expected and isinstance(expected[0], int):
        expected[0] *= per_call
    ok = len(shape) == len(expected) and all(
        not isinstance(e, int) or e == d for e, d in zip(expected, shape, strict=True)
    )
    if not ok:
        scaled = (
            f" (batches_per_step x replication_factor = {per_call} micro-batches)"
            if per_call > 1
            else ""
        )
        raise OnnxError(
            f"{source}: input {spec.name!r} must have shape {_shape_text(tuple(expected))}"
            f"{scaled}, got {list(shape)}"
        )
