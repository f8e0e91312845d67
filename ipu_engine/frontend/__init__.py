"""The framework-level front-end: traced Python functions, sharding, pipelining,
replication, on-device loops.

Write a function over tensors with numpy-style operators; ``compile`` / ``function``
trace it, build the graph with the library ops (popops, poplin, popnn), compile an
Engine and run it on numpy arrays. See ``ipu_engine/frontend/README.md``.
"""

from ipu_engine.frontend import ops
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
from ipu_engine.frontend.options import Options
from ipu_engine.frontend.traced import TracedTensor

__all__ = [
    "CompiledFunction",
    "Options",
    "TracedTensor",
    "compile",
    "exp",
    "function",
    "log",
    "matmul",
    "maximum",
    "mean",
    "minimum",
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
    "transpose",
]
