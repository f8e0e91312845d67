"""``poptorch.inferenceModel(model, options)``: the wrapper a PopTorch user calls in place
of the model. The first call with each input signature exports the model (one
micro-batch's worth of its inputs) and compiles it into an ``ipu_engine.onnx``
``InferenceSession``; each call then runs it on the embedded engine and returns torch
tensors in the model's own output structure."""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils import _pytree as pytree

from ipu_engine.common.errors import EngineError
from ipu_engine.onnx import InferenceSession
from ipu_engine.poptorch.export import Exported, export_model
from ipu_engine.poptorch.options import Options, OutputMode, ShardedExecution

__all__ = ["PoplarExecutor", "inferenceModel", "trainingModel"]

#: Layers that compute otherwise in training mode.
_TRAINING_LAYERS = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)


@dataclass
class _Compiled:
    exported: Exported
    session: InferenceSession
    input_names: list[str]


def _leaves(args: tuple, kwargs: dict) -> tuple[list[Any], pytree.TreeSpec]:
    return pytree.tree_flatten((args, kwargs))


def _signature(leaves: list[Any], spec: pytree.TreeSpec) -> tuple:
    """What a compiled program depends on: the inputs' structure, each tensor's shape and
    type, and every other argument's value (torch.export bakes those in)."""
    parts = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            parts.append(("tensor", tuple(leaf.shape), str(leaf.dtype)))
        else:
            parts.append(("value", repr(leaf)))
    return (str(spec), tuple(parts))


def _feeds(compiled: _Compiled, leaves: list[Any]) -> dict[str, np.ndarray]:
    """The session's feeds: the call's tensors, in the exported model's input order."""
    tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
    return {
        name: t.detach().cpu().numpy()
        for name, t in zip(compiled.input_names, tensors, strict=True)
    }


class PoplarExecutor:
    """A model wrapped for the IPU (PopTorch's ``PoplarExecutor``): call it as the model."""

    def __init__(self, model: torch.nn.Module, options: Options | None) -> None:
        if not isinstance(model, torch.nn.Module):
            raise EngineError(
                f"poptorch.inferenceModel: needs a torch.nn.Module, got {type(model).__name__}"
            )
        if options is not None and not isinstance(options, Options):
            raise EngineError(
                "poptorch.inferenceModel: options must be a poptorch.Options, got "
                f"{type(options).__name__}"
            )
        self._user_model = model
        self._options = options or Options()
        self._compiled: dict[tuple, _Compiled] = {}
        self._last: _Compiled | None = None
        if model.training and any(isinstance(m, _TRAINING_LAYERS) for m in model.modules()):
            warnings.warn(
                f"poptorch.inferenceModel: {type(model).__name__} is in training mode; it "
                "runs as it is (dropout, batch statistics): call model.eval() first for "
                "inference behaviour",
                stacklevel=3,
            )

    # -- PopTorch's methods --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, spec = _leaves(args, kwargs)
        compiled = self._compile(leaves, spec, args, kwargs)
        outputs = compiled.session.run(None, _feeds(compiled, leaves))
        prints = compiled.exported.prints
        flat = outputs[: len(outputs) - len(prints)]
        self._print(prints, outputs[len(flat) :])
        results = [self._returned(torch.from_numpy(np.ascontiguousarray(a))) for a in flat]
        return pytree.tree_unflatten(results, compiled.exported.out_spec)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Export and compile for these inputs, as PopTorch's ``compile``. The engine
        compiles its program on the session's first run, so that runs once, on them."""
        leaves, spec = _leaves(args, kwargs)
        compiled = self._compile(leaves, spec, args, kwargs)
        if compiled.session.last is None:
            compiled.session.run(None, _feeds(compiled, leaves))

    def isCompiled(self) -> bool:
        return self._last is not None

    def copyWeightsToDevice(self) -> None:
        """The model's weights changed on the host: the next call exports them again."""
        self._compiled.clear()
        self._last = None

    def destroy(self) -> None:
        self._compiled.clear()
        self._last = None

    def detachFromDevice(self) -> None:
        """The embedded engine holds no device: nothing to release."""

    def attachToDevice(self) -> None:
        """The embedded engine is always attached."""

    @property
    def session(self) -> InferenceSession | None:
        """The last call's ``ipu_engine.onnx.InferenceSession`` (its model, its program)."""
        return None if self._last is None else self._last.session

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._user_model, name)

    def __repr__(self) -> str:
        return f"PoplarExecutor(inference, {self._user_model!r})"

    # -- steps -------------------------------------------------------------------------------
    def _per_call(self) -> int:
        return self._options.device_iterations * self._options.replication_factor

    def _micro_batch(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """One micro-batch of every tensor input: what the model sees on the IPU."""
        per_call = self._per_call()
        if per_call == 1:
            return args, kwargs
        leaves, spec = _leaves(args, kwargs)
        sliced = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                if leaf.ndim == 0 or leaf.shape[0] % per_call:
                    raise EngineError(
                        f"poptorch: input {i} has shape {list(leaf.shape)}: with "
                        f"deviceIterations {self._options.device_iterations} x "
                        f"replicationFactor {self._options.replication_factor} its first "
                        f"dimension must be a multiple of {per_call}"
                    )
                leaf = leaf[: leaf.shape[0] // per_call]
            sliced.append(leaf)
        return pytree.tree_unflatten(sliced, spec)

    def _compile(self, leaves: list, spec: pytree.TreeSpec, args: tuple, kwargs: dict) -> _Compiled:
        key = _signature(leaves, spec)
        compiled = self._compiled.get(key)
        if compiled is None:
            opts = self._options
            pipelined = not isinstance(opts.execution_strategy, ShardedExecution)
            micro_args, micro_kwargs = self._micro_batch(args, kwargs)
            exported = export_model(self._user_model, micro_args, micro_kwargs, pipelined)
            pipelined = pipelined and exported.ipus > 1
            if pipelined and opts.device_iterations < exported.ipus:
                raise EngineError(
                    f"PipelinedExecution over {exported.ipus} IPUs (the blocks' ipu_id) needs "
                    f"deviceIterations >= {exported.ipus} micro-batches to fill the pipeline, "
                    f"got {opts.device_iterations}: opts.deviceIterations({exported.ipus})"
                )
            session = InferenceSession(
                exported.model,
                ipus=exported.ipus,
                replication_factor=opts.replication_factor,
                batches_per_step=opts.device_iterations,
                options=self._session_options(exported.half),
            )
            names = [i.name for i in session.get_inputs()]
            tensors = sum(isinstance(leaf, torch.Tensor) for leaf in leaves)
            if len(names) != tensors:
                raise EngineError(
                    f"poptorch: the exported {type(self._user_model).__name__} takes "
                    f"{len(names)} tensor inputs ({names}) but the call gave {tensors}"
                )
            compiled = self._compiled[key] = _Compiled(exported, session, names)
        self._last = compiled
        return compiled

    def _session_options(self, half: bool) -> dict[str, Any]:
        opts = self._options
        engine = dict(opts.engine_options)
        # as in PopTorch, POPLAR_ENGINE_OPTIONS wins over enableProfiling's directory
        try:
            environment = json.loads(os.environ.get("POPLAR_ENGINE_OPTIONS") or "{}")
        except ValueError:
            environment = {}
        if isinstance(environment, dict):
            engine = {k: v for k, v in engine.items() if k not in environment}
        if opts.executable_cache_path:
            engine["executableCache.directory"] = opts.executable_cache_path
        found: dict[str, Any] = {
            "name": opts.model_name or "inference",
            "engine_options": engine,
            "partials_type": opts.Precision.partials_type,
            "dtype": "float16" if half else "float32",
        }
        if opts.available_memory_proportion:
            found["available_memory_proportion"] = dict(opts.available_memory_proportion)
        return found

    def _returned(self, value: torch.Tensor) -> torch.Tensor:
        """An output's micro-batches as ``outputMode`` asks (All: as they came)."""
        opts = self._options
        mode, d = opts.output_mode, opts.device_iterations
        if d == 1 or mode in (OutputMode.All, OutputMode.Default) or value.ndim == 0:
            return value
        per_iteration = value.reshape(d, -1, *value.shape[1:])
        if mode == OutputMode.Final:
            return per_iteration[-1]
        if mode == OutputMode.Sum:
            return per_iteration.sum(dim=0)
        period = opts.output_return_period
        return per_iteration[period - 1 :: period].reshape(-1, *value.shape[1:])

    def _print(self, prints: tuple, values: list[np.ndarray]) -> None:
        """Each ``ipu_print_tensor``'s value, micro-batch by micro-batch."""
        per_call = self._per_call()
        for p, value in zip(prints, values, strict=True):
            parts = np.split(value, per_call) if per_call > 1 and value.ndim else [value]
            for part in parts:
                print(f"{p.title}: {torch.from_numpy(np.ascontiguousarray(part))}")


def inferenceModel(model: torch.nn.Module, options: Options | None = None) -> PoplarExecutor:
    """The model wrapped for inference on the embedded IPU engine, as PopTorch wraps it:
    call the result with the model's own arguments (a batch of deviceIterations x
    replicationFactor micro-batches) and get torch tensors back."""
    if isinstance(model, PoplarExecutor):
        model = model._user_model
    return PoplarExecutor(model, options)


def trainingModel(
    model: torch.nn.Module, options: Options | None = None, optimizer: Any = None
) -> PoplarExecutor:
    """Not supported yet: a trained model is exported for inference (``inferenceModel``)."""
    raise EngineError(
        "poptorch.trainingModel is not supported: export the model for inference -- train "
        "it in PyTorch, then call model.eval() and poptorch.inferenceModel(model, options) "
        "(ipu_engine.frontend's training_model trains its own nn layers on the engine)"
    )
