"""The framework-level front-end: traced Python functions, sharding, pipelining,
replication, on-device loops, and a small NN layer set with SGD training.

Write a function over tensors with numpy-style operators; ``compile`` / ``function``
trace it, build the graph with the library ops (popops, poplin, popnn), compile an
Engine and run it on numpy arrays. See ``ipu_engine/frontend/README.md``.
"""

from ipu_engine.frontend import nn, ops
from ipu_engine.frontend.api import CompiledFunction, compile, function, pipeline
from ipu_engine.frontend.ir import pipeline_stage, shard
from ipu_engine.frontend.ops import (
    exp,
    log,
    matmul,
    maximum,
    mean,
    minimum,
    relu,
    reshape,
    sigmoid,
    softmax,
    sqrt,
    square,
    tanh,
    transpose,
)
from ipu_engine.frontend.optim import SGD
from ipu_engine.frontend.options import Options
from ipu_engine.frontend.traced import TracedTensor
from ipu_engine.frontend.training import (
    InferenceModel,
    TrainingModel,
    inference_model,
    training_model,
)

__all__ = [
    "SGD",
    "CompiledFunction",
    "InferenceModel",
    "Options",
    "TracedTensor",
    "TrainingModel",
    "compile",
    "exp",
    "function",
    "inference_model",
    "log",
    "matmul",
    "maximum",
    "mean",
    "minimum",
    "nn",
    "ops",
    "pipeline",
    "pipeline_stage",
    "relu",
    "reshape",
    "shard",
    "sigmoid",
    "softmax",
    "sqrt",
    "square",
    "tanh",
    "training_model",
    "transpose",
]
