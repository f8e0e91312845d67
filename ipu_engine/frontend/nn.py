"""A small layer set in PopTorch's spirit: ``Linear``, ``ReLU``, ``Sigmoid``, ``Tanh``,
``Softmax`` and ``Sequential``, the ``CrossEntropyLoss`` and ``MSELoss`` losses, and
``begin_block`` to place layers on IPUs.

Weights are host numpy arrays (``Linear.weight`` is [in, out]: ``y = x @ W + b``), float32
unless made float16 (``Linear(..., dtype=np.float16)`` or ``model.half()``). Calling
a layer on a traced tensor records its forward ops and, on the trace's tape, what its
backward needs; ``backward`` then writes every gradient with traced ops too, so the
gradients are explicit library ops in the graph, under ``<layer>/grad`` scopes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ipu_engine.common.arguments import (
    host_values,
    instance_arg,
    integer_arg,
    mapping_arg,
    name_arg,
)
from ipu_engine.common.errors import ArgumentError, GraphError, ShapeError, TypeMismatchError
from ipu_engine.common.types import as_type
from ipu_engine.frontend import ops
from ipu_engine.frontend.ir import (
    TapeEntry,
    Trace,
    current_placement,
    pipeline_stage,
    placed,
    shard,
)
from ipu_engine.frontend.traced import TracedTensor, active_trace, element_type_of, user_line
from ipu_engine.poplar.debug import current_scopes, name_scope
from ipu_engine.poplar.host_memory import check_fits

Grads = dict[str, TracedTensor]


WEIGHT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32))


def weight_dtype(dtype: Any, what: str) -> np.dtype:
    """``dtype`` if weights can be held in it (float16 or float32), else a clear error."""
    try:
        result = np.dtype(dtype)
    except TypeError:
        result = None
    if result is None or result not in WEIGHT_DTYPES:
        raise TypeMismatchError(
            f"{what}: weights are float16 or float32, not {dtype!r}; use np.float16 "
            "(half) or np.float32"
        )
    return result


class Layer:
    """A layer: ``forward`` gives (output, saved); ``backward`` the input and weight grads.

    A layer made of layers (held in attributes, as PyTorch modules hold theirs) may return
    just its output from ``forward``: its layers record their own backward. Weights are
    named by where they live -- ``<layer>.<attribute>.weight`` -- as PyTorch's
    ``named_parameters()`` names them.
    """

    weight_attributes: tuple[str, ...] = ()  # the attributes holding its weight arrays

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            name_arg(name, f"{type(self).__name__}: the name", ArgumentError)
        self.name = name or type(self).__name__.lower()
        self.named = name is not None
        self.block_ipu: int | None = None  # set by begin_block

    def __setattr__(self, key: str, value: Any) -> None:
        # a layer held in an attribute is called by the attribute, unless the user named it
        if isinstance(value, Layer) and not value.named:
            value.name = key
        object.__setattr__(self, key, value)

    def children(self) -> list[Layer]:
        """The layers this layer holds, in the order they were set."""
        return [v for v in vars(self).values() if isinstance(v, Layer)]

    def local_parameters(self) -> dict[str, np.ndarray]:
        """This layer's own weights by their short names (``weight``, ``bias``)."""
        return {}

    def parameters(self) -> dict[str, np.ndarray]:
        """Every weight of this layer and of the layers it holds, by the names the traced
        program gives them (``linear0.weight``, ``encoder.fc1.bias``)."""
        own = dict(self.local_parameters())
        for child in self.children():
            own.update(child.parameters())
        return {f"{self.name}.{k}": v for k, v in own.items()}

    def to(self, dtype: Any) -> Layer:
        """PyTorch's ``module.to(dtype)``: this layer's and the layers it holds' weights
        cast to ``dtype`` (float16 or float32), in place; returns the layer."""
        target = weight_dtype(dtype, f"{self.name}.to")
        for layer in self.children():
            layer.to(target)
        for attribute in self.weight_attributes:
            setattr(self, attribute, getattr(self, attribute).astype(target))
        return self

    def half(self) -> Layer:
        """PyTorch's ``module.half()``: float16 weights here and in every sublayer."""
        return self.to(np.float16)

    def float(self) -> Layer:
        """PyTorch's ``module.float()``: float32 weights here and in every sublayer."""
        return self.to(np.float32)

    def load_parameters(self, values: dict[str, np.ndarray]) -> None:
        """Set the weights named in ``values`` (others keep theirs); each value must have
        its weight's shape and be numbers the weight's type holds. All are checked before
        any weight changes."""
        values = mapping_arg(values, f"{self.name}.load_parameters: the values", ArgumentError)
        checked = []
        for name, array in self.parameters().items():
            if name not in values:
                continue
            what = f"{self.name}.load_parameters: {name!r}"
            data = host_values(values[name], as_type(array.dtype), what, GraphError)
            if data.shape != array.shape:
                raise ShapeError(f"{what} has shape {list(array.shape)}, got {list(data.shape)}")
            checked.append((array, data))
        for array, data in checked:
            array[...] = data

    def __call__(self, *args: Any) -> TracedTensor:
        trace = active_trace(*args)
        shard_now, stage_now = current_placement()
        name = trace.layer_names.claim(self, current_scopes(), user_line())
        with name_scope(name):
            result = self.forward(*args)
        if isinstance(result, TracedTensor):  # a layer of layers: they are on the tape
            return result
        out, saved = result
        inputs = tuple(a.node for a in args if isinstance(a, TracedTensor))
        trace.tape.append(TapeEntry(self, saved, inputs, out.node, shard_now, stage_now))
        return out

    def forward(self, *args: Any) -> tuple[TracedTensor, Any] | TracedTensor:
        raise NotImplementedError

    def backward(self, saved: Any, grad: TracedTensor, need_input: bool) -> tuple[Any, Grads]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def begin_block(layer: Layer, ipu_id: int) -> Layer:
    """PopTorch's ``BeginBlock``: ``layer`` and those after it run on IPU ``ipu_id`` -- as
    the next pipeline stage (inference and training), or as a shard when the options'
    ``execution_strategy`` is "sharded"."""
    instance_arg(layer, Layer, "begin_block: the layer")
    ipu = integer_arg(ipu_id, f"begin_block({layer.name}): the IPU", ArgumentError)
    if ipu < 0:
        raise ShapeError(f"begin_block({layer.name}): the IPU must be 0 or more, got {ipu}")
    layer.block_ipu = ipu
    return layer


class Linear(Layer):
    """``y = x @ weight + bias`` with weights drawn as PyTorch does, U(-1/sqrt(in), 1/sqrt(in)),
    held in ``dtype`` (float32, or float16 for a half model)."""

    weight_attributes = ("weight", "bias")

    def __init__(
        self,
        in_features: int,
        out_features: int,
        name: str | None = None,
        seed: int | None = None,
        dtype: Any = np.float32,
    ) -> None:
        super().__init__(name)
        what = f"Linear({name!r})" if name else "Linear"
        for size, field in ((in_features, "in_features"), (out_features, "out_features")):
            if integer_arg(size, f"{what}: {field}", ShapeError) < 1:
                raise ShapeError(f"{what}: {field} must be at least 1, got {size}")
        if seed is not None:
            seed = integer_arg(seed, f"{what}: the seed", ArgumentError)
            if seed < 0:
                raise ShapeError(f"{what}: the seed must be 0 or more, got {seed}")
        target = weight_dtype(dtype, name or "Linear")
        shape = (in_features, out_features)
        check_fits(f"{what}.weight", shape, in_features * out_features, target.itemsize, 0)
        rng = np.random.default_rng(seed)
        bound = 1.0 / np.sqrt(in_features)
        self.weight = rng.uniform(-bound, bound, shape).astype(target)
        self.bias = rng.uniform(-bound, bound, out_features).astype(target)

    def local_parameters(self) -> dict[str, np.ndarray]:
        return {"weight": self.weight, "bias": self.bias}

    def forward(self, x: TracedTensor) -> tuple[TracedTensor, Any]:
        if x.ndim != 2 or x.shape[1] != self.weight.shape[0]:
            raise ShapeError(
                f"{user_line()}: {self.name} takes [batch, {self.weight.shape[0]}] inputs, got "
                f"{x.node.describe()}"
            )
        w = _param(x.trace, "weight", self.weight)
        b = _param(x.trace, "bias", self.bias)
        return x @ w + b, (x, w, b)

    def backward(self, saved: Any, grad: TracedTensor, need_input: bool) -> tuple[Any, Grads]:
        x, w, b = saved
        grads = {w.name: x.T @ grad, b.name: grad.sum(axis=0)}
        return (grad @ w.T if need_input else None), grads


class _NonLinearity(Layer):
    kind = ""

    def forward(self, x: TracedTensor) -> tuple[TracedTensor, Any]:
        y = getattr(ops, self.kind)(x)
        return y, y

    def backward(self, saved: Any, grad: TracedTensor, need_input: bool) -> tuple[Any, Grads]:
        return ops.nonlinearity_grad(self.kind, saved, grad), {}


class ReLU(_NonLinearity):
    kind = "relu"


class Sigmoid(_NonLinearity):
    kind = "sigmoid"


class Tanh(_NonLinearity):
    kind = "tanh"


class Softmax(Layer):
    """Softmax over the last axis."""

    def forward(self, x: TracedTensor) -> tuple[TracedTensor, Any]:
        y = ops.softmax(x)
        return y, y

    def backward(self, saved: Any, grad: TracedTensor, need_input: bool) -> tuple[Any, Grads]:
        y = saved
        return y * (grad - (grad * y).sum(axis=-1, keepdims=True)), {}


class Sequential(Layer):
    """Layers applied in order; unnamed ones are called ``<type><index>`` (``linear0``)."""

    def __init__(self, *layers: Layer, name: str | None = None) -> None:
        if name is not None:
            name_arg(name, "Sequential: the name", ArgumentError)
        super().__init__(name or "sequential")
        self.named = name is not None
        self.layers = [
            instance_arg(layer, Layer, f"Sequential: layer {i}") for i, layer in enumerate(layers)
        ]
        for i, layer in enumerate(self.layers):
            if not layer.named:
                layer.name = f"{type(layer).__name__.lower()}{i}"
        names = [layer.name for layer in self.layers]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise GraphError(f"two layers of the Sequential are called {duplicate!r}")

    def children(self) -> list[Layer]:
        return self.layers

    def parameters(self) -> dict[str, np.ndarray]:
        if self.named:
            return super().parameters()
        return {k: v for layer in self.layers for k, v in layer.parameters().items()}

    def __call__(self, x: TracedTensor) -> TracedTensor:  # type: ignore[override]
        trace = active_trace(x)
        if self.named:
            self.name = trace.layer_names.claim(self, current_scopes(), user_line())
        # as PopTorch: once any layer begins a block, the layers before the first block
        # are block 0 on IPU 0, and each begin_block starts the next block
        blocks = any(layer.block_ipu is not None for layer in self.layers)
        stage, ipu = (0, 0) if blocks else (-1, None)
        with name_scope(self.name) if self.named else contextlib.nullcontext():
            for i, layer in enumerate(self.layers):
                if layer.block_ipu is not None:
                    stage, ipu = stage + (i > 0), layer.block_ipu
                with _block(trace, stage, ipu):
                    x = layer(x)
        return x


@contextlib.contextmanager
def _block(trace: Trace, stage: int, ipu: int | None) -> Iterator[None]:
    if ipu is None:
        yield
    elif trace.pipelined_blocks:
        with pipeline_stage(stage, ipu):
            yield
    else:
        with shard(ipu):
            yield


def _param(trace: Trace, short_name: str, value: np.ndarray) -> TracedTensor:
    """The layer's weight, named by the scopes it is called in (``encoder.fc1.weight``)."""
    name = ".".join((*current_scopes(), short_name))
    return TracedTensor(trace, trace.param(name, value, element_type_of(value.dtype)))


class CrossEntropyLoss(Layer):
    """Mean cross-entropy of softmax(logits) [B, C] against integer labels [B]."""

    def forward(self, logits: TracedTensor, labels: TracedTensor) -> tuple[TracedTensor, Any]:
        per_sample = ops.softmax_cross_entropy(logits, labels)
        return per_sample.mean(), (per_sample, logits.shape[0])

    def backward(self, saved: Any, grad: Any = None, need_input: bool = True) -> tuple[Any, Grads]:
        per_sample, batch = saved
        return ops.softmax_cross_entropy_grad(per_sample) * (1.0 / batch), {}


class MSELoss(Layer):
    """Mean squared error of predictions against float targets of the same shape."""

    def forward(self, pred: TracedTensor, target: TracedTensor) -> tuple[TracedTensor, Any]:
        if pred.shape != target.shape:
            raise ShapeError(
                f"{user_line()}: MSELoss needs predictions and targets of one shape; got "
                f"{pred.node.describe()} and {target.node.describe()}"
            )
        diff = pred - target
        return (diff * diff).mean(), diff

    def backward(self, saved: Any, grad: Any = None, need_input: bool = True) -> tuple[Any, Grads]:
        return saved * (2.0 / saved.size), {}


def backward(trace: Trace) -> Grads:
    """The gradient of the traced loss (the tape's last entry) for every weight.

    Each layer's backward runs on the IPU (and in the stage) of its forward, inside
    ``<layer>/grad``. The model must be a chain: each layer takes the one before's output.
    """
    if not trace.tape or not isinstance(trace.tape[-1].layer, CrossEntropyLoss | MSELoss):
        raise GraphError("backward needs a traced loss (CrossEntropyLoss or MSELoss) last")
    loss, layers = trace.tape[-1], trace.tape[:-1]
    with placed(loss.shard, loss.stage), name_scope(loss.layer.name), name_scope("grad"):
        grad, _ = loss.layer.backward(loss.saved)
    expected = loss.inputs[0]
    grads: Grads = {}
    for i, entry in enumerate(reversed(layers)):
        if entry.output is not expected:
            raise GraphError(
                f"{entry.output.where()}: training needs the model to be a chain of layers; "
                f"{entry.layer.name} does not feed the layer after it"
            )
        need_input = i < len(layers) - 1
        with (
            placed(entry.shard, entry.stage),
            name_scope(entry.layer.name),
            name_scope("grad"),
        ):
            grad, weight_grads = entry.layer.backward(entry.saved, grad, need_input)
            weight_grads = {n: _like_weight(trace, n, g) for n, g in weight_grads.items()}
        grads |= weight_grads
        expected = entry.inputs[0] if entry.inputs else expected
    return grads


def _like_weight(trace: Trace, name: str, grad: TracedTensor) -> TracedTensor:
    """A weight's gradient in the weight's type (a float32 loss over a half model gives
    float32 gradients; the half weights' update takes them in half, as PyTorch's autograd)."""
    weight_type = trace.params[name].type
    return grad if grad.dtype == weight_type else grad.astype(weight_type)
