"""``training_model`` and ``inference_model``: PopTorch's wrappers over a layer model.

Call them with numpy batches. The first call compiles (the weights are copied to the
device then); a training call runs forward, backward and the optimizer's updates on the
device and returns the loss, then copies the weights back into the model's arrays.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ipu_engine.common.errors import GraphError
from ipu_engine.common.types import FLOAT, INT
from ipu_engine.frontend.api import CompiledFunction, CompiledProgram
from ipu_engine.frontend.available_memory import apply_model_proportion
from ipu_engine.frontend.feeds import micro_batch_shape
from ipu_engine.frontend.fusion import FusingGraph
from ipu_engine.frontend.ir import Trace, tracing
from ipu_engine.frontend.ir_record import Training, trace_record
from ipu_engine.frontend.nn import CrossEntropyLoss, Layer, MSELoss, backward
from ipu_engine.frontend.optim import SGD
from ipu_engine.frontend.options import Options, resolve
from ipu_engine.frontend.pipeline import is_pipelined, pipeline_stages
from ipu_engine.frontend.session import DeviceSession
from ipu_engine.frontend.traced import TracedTensor, element_type_of
from ipu_engine.frontend.training_program import (
    TracedTraining,
    build_pipelined_training,
    build_training,
)
from ipu_engine.poplar import journal
from ipu_engine.poplar.options import parse_options


def build_training_program(
    traced: TracedTraining, optimizer: SGD, o: Options, ipus: int, name: str
) -> tuple[FusingGraph, Any]:
    """The graph and built training program (no engine yet): what a ``TrainingModel`` and a
    what-if's replay (``ipu_engine.replan``) both build."""
    graph = FusingGraph(o.device(ipus).target)
    build = build_pipelined_training if is_pipelined(traced.trace) else build_training
    with journal.paused():
        built = build(
            graph,
            traced,
            optimizer,
            o.replication_factor,
            ipus,
            o.gradient_accumulation,
            o.device_iterations,
            name,
            o.target_text(),
        )
    return graph, built


class TrainingModel:
    """A model, a loss and an optimizer compiled into one on-device training program."""

    def __init__(
        self, model: Layer, optimizer: SGD, loss: CrossEntropyLoss | MSELoss, options: Options
    ) -> None:
        self.model, self.optimizer, self.loss_fn, self.options = model, optimizer, loss, options
        self.session: DeviceSession | None = None
        self._signature: tuple | None = None
        self._weights: dict[str, np.ndarray] = {}  # the model's arrays by their traced names

    @property
    def graph(self) -> FusingGraph:
        return self._compiled("graph").graph  # type: ignore[return-value]

    @property
    def engine(self) -> Any:
        return self._compiled("engine").engine

    def _compiled(self, what: str) -> DeviceSession:
        if self.session is None:
            raise GraphError(f"the training model has no {what} until it is first called")
        return self.session

    def __call__(self, x: Any, labels: Any) -> float | np.ndarray:
        """Train on a batch; the mean loss of each weight update (a float for one)."""
        x, labels = np.asarray(x), np.asarray(labels)
        o = self.options
        per_call = o.device_iterations * o.gradient_accumulation * o.replication_factor
        counts = (
            f"device_iterations={o.device_iterations} x gradient_accumulation="
            f"{o.gradient_accumulation} x replication_factor={o.replication_factor}"
        )
        # class labels are int; regression targets keep their float type (half or float)
        if isinstance(self.loss_fn, CrossEntropyLoss):
            label_type = INT
        else:
            label_type = element_type_of(labels.dtype) if labels.dtype.kind == "f" else FLOAT
        signature = (
            (micro_batch_shape(x, per_call, "the input batch", counts), element_type_of(x.dtype)),
            (micro_batch_shape(labels, per_call, "the labels", counts), label_type),
        )
        if self.session is None or signature != self._signature:
            self._compile(signature)
            self._signature = signature
        assert self.session is not None
        (losses,) = self.session.run([x, labels])
        for name, value in self.session.read_params(0).items():
            self._weights[name][...] = value
        per_update = losses.reshape(o.device_iterations, -1).mean(axis=1)
        return float(per_update[0]) if per_update.size == 1 else per_update

    def _compile(self, signature: tuple) -> None:
        o = self.options
        pipelined = o.execution_strategy == "pipelined"
        trace = Trace(o.ipus_per_replica, o.target_text(), pipelined, o.partials_type)
        (x_shape, x_type), (y_shape, y_type) = signature
        with tracing(trace):
            x = TracedTensor(trace, trace.input(x_shape, x_type, "x"))
            y = TracedTensor(trace, trace.input(y_shape, y_type, "labels"))
            out = self.model(x)
            loss_from = len(trace.nodes)
            loss = self.loss_fn(out, y)
            grads = backward(trace)
        apply_model_proportion(trace, o.available_memory_proportion)
        traced = TracedTraining(trace, loss.node, {n: g.node for n, g in grads.items()}, loss_from)
        ipus = o.ipus_per_replica or (max((n.shard for n in trace.nodes), default=0) + 1)
        device = o.device(ipus)
        name = o.name or "training"
        graph, built = build_training_program(traced, self.optimizer, o, ipus, name)
        framework = o.framework_info("training", ipus, pipeline_stages(trace))
        options = o.engine_options_with_cache()

        def graph_record() -> tuple[dict, dict]:
            grads_of = Training(traced.loss, traced.grads, traced.loss_from, self.optimizer.lr)
            instrument = parse_options(options).instrument
            outputs = [traced.loss]
            return trace_record(trace, outputs, True, "training", name, o, instrument, grads_of)

        self.session = DeviceSession(graph, built, device, options, framework, graph_record)
        self._weights = trace.weights()
        self.session.write_params(self._weights)

    @property
    def schedule(self) -> list | None:
        """A pipelined model's time steps (ramp-up, steady state, ramp-down), else None."""
        return self._compiled("schedule").built.extra.get("schedule")  # type: ignore[return-value]

    def replica_weights(self) -> list[dict[str, np.ndarray]]:
        """Every replica's weights as they are on the device."""
        session = self._compiled("weights")
        return [session.read_params(r) for r in range(session.replicas)]


class InferenceModel:
    """A model's forward pass compiled for the device; the model's current weights are
    copied to the device before each call, so it always runs what the host holds."""

    def __init__(self, model: Layer, options: Options) -> None:
        self.model = model
        named = dataclasses.replace(options, name=options.name or "inference")
        self.function = CompiledFunction(
            self._forward, named, before_run=self._copy_weights, kind="inference"
        )

    def _forward(self, x: TracedTensor) -> TracedTensor:
        return self.model(x)

    def _copy_weights(self, program: CompiledProgram) -> None:
        program.session.write_params(program.traced.trace.weights())

    @property
    def last(self) -> CompiledProgram | None:
        """The program the last call ran (its graph, engine and schedule)."""
        return self.function.last

    @property
    def schedule(self) -> list | None:
        """A pipelined model's time steps (ramp-up, steady state, ramp-down), else None."""
        return None if self.function.last is None else self.function.last.schedule

    def __call__(self, x: Any) -> np.ndarray:
        return self.function(x)  # type: ignore[return-value]


def training_model(
    model: Layer,
    optimizer: SGD,
    loss: CrossEntropyLoss | MSELoss | None = None,
    options: Options | None = None,
    **overrides: Any,
) -> TrainingModel:
    """PopTorch's ``trainingModel``: ``train(x, labels)`` runs a training step, returns the loss."""
    return TrainingModel(model, optimizer, loss or CrossEntropyLoss(), resolve(options, overrides))


def inference_model(
    model: Layer, options: Options | None = None, **overrides: Any
) -> InferenceModel:
    """PopTorch's ``inferenceModel``: ``infer(x)`` returns the model's output for a batch."""
    return InferenceModel(model, resolve(options, overrides))
