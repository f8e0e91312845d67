"""ipu_engine: an embedded IPU execution engine in the spirit of Poplar's IPU Model.

Build a graph (variables, tile mapping, compute sets of vertices, programs), compile it
into an Engine, run it with numpy, and read the results; Poplar's names in snake_case.

Its floors, bottom up, each importing only those below: ``common`` (errors, argument
checks, element types), ``pvti``, ``poplar`` (the core, its compiler and cost model),
``codelets``, PopLibs (``poputil``, ``popops``, ``poplin``, ``popnn``) and the frameworks
(``frontend``, ``onnx``); this module is their public face.
"""

import ipu_engine.frontend as _frontend
from ipu_engine.common.errors import (
    ArgumentError,
    CodeletError,
    EngineError,
    ExecutionError,
    GraphError,
    HandleError,
    HostMemoryError,
    OptionError,
    OutOfMemoryError,
    ProgramError,
    ShapeError,
    ShardError,
    StreamError,
    TileMappingError,
    TypeMismatchError,
    VertexConnectionError,
)
from ipu_engine.common.types import (
    BOOL,
    CHAR,
    FLOAT,
    HALF,
    INT,
    LONGLONG,
    SHORT,
    UNSIGNED_CHAR,
    UNSIGNED_INT,
    UNSIGNED_LONGLONG,
    UNSIGNED_SHORT,
    Type,
)
from ipu_engine.common.version import __version__ as __version__
from ipu_engine.frontend import (
    SGD,
    Options,
    TracedTensor,
    function,
    inference_model,
    nn,
    ops,
    pipeline,
    pipeline_stage,
    shard,
    training_model,
)
from ipu_engine.poplar.debug import name_scope
from ipu_engine.poplar.engine import Engine
from ipu_engine.poplar.graph import Function, Graph
from ipu_engine.poplar.program import (
    Block,
    Call,
    Copy,
    Execute,
    If,
    PrintTensor,
    Program,
    Repeat,
    RepeatWhileFalse,
    RepeatWhileTrue,
    Sequence,
    Sync,
    WriteUndef,
)
from ipu_engine.poplar.streams import DataStream
from ipu_engine.poplar.target import Device, IPUModel, RelativeSyncDelayType, Target, ipu_hardware
from ipu_engine.poplar.tensor import Tensor, concat
from ipu_engine.poplar.vertex import InOut, Input, Output, State, Vector, Vertex
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poplar.virtual_graph import create_virtual_graph, on_ipu, on_tiles

# ``ipu_engine.compile(fn, inputs)`` traces and runs ``fn`` (the engine's own compiler
# lives in ``ipu_engine.poplar.compiler``).
compile = _frontend.compile


__all__ = [
    "BOOL",
    "CHAR",
    "FLOAT",
    "HALF",
    "INT",
    "LONGLONG",
    "SGD",
    "SHORT",
    "UNSIGNED_CHAR",
    "UNSIGNED_INT",
    "UNSIGNED_LONGLONG",
    "UNSIGNED_SHORT",
    "ArgumentError",
    "Block",
    "Call",
    "CodeletError",
    "Copy",
    "DataStream",
    "Device",
    "EdgeColumn",
    "Engine",
    "EngineError",
    "Execute",
    "ExecutionError",
    "Function",
    "Graph",
    "GraphError",
    "HandleError",
    "HostMemoryError",
    "IPUModel",
    "If",
    "InOut",
    "Input",
    "OptionError",
    "Options",
    "OutOfMemoryError",
    "Output",
    "PrintTensor",
    "Program",
    "ProgramError",
    "RelativeSyncDelayType",
    "Repeat",
    "RepeatWhileFalse",
    "RepeatWhileTrue",
    "Sequence",
    "ShapeError",
    "ShardError",
    "State",
    "StreamError",
    "Sync",
    "Target",
    "Tensor",
    "TileMappingError",
    "TracedTensor",
    "Type",
    "TypeMismatchError",
    "Vector",
    "Vertex",
    "VertexConnectionError",
    "WriteUndef",
    "compile",
    "concat",
    "create_virtual_graph",
    "function",
    "inference_model",
    "ipu_hardware",
    "name_scope",
    "nn",
    "on_ipu",
    "on_tiles",
    "ops",
    "pipeline",
    "pipeline_stage",
    "shard",
    "training_model",
]
