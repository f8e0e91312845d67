"""Build one library op on a small IPU Model, run it on host data and read its results:
the shared set-up of the per-op tests (conv groups, pooling, select, gather, ...)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ipu_engine import Graph, IPUModel, Sequence, poputil
from ipu_engine.common.types import as_type
from ipu_engine.poplar.tensor import Tensor
from tests.ipu_engine.conftest import run_program

Build = Callable[[Graph, dict[str, Tensor], Sequence], Tensor | dict[str, Tensor]]


def run_op(
    build: Build, inputs: dict[str, np.ndarray], tiles: int = 32
) -> tuple[Graph, dict[str, np.ndarray]]:
    """Variables of ``inputs``' shapes and types, spread linearly and written from the
    host; ``build`` adds the op; its result(s) are read back after one run."""
    device = IPUModel("ipu2", tiles_per_ipu=tiles).create_device()
    graph = Graph(device.target)
    tensors = {}
    for name, value in inputs.items():
        tensors[name] = graph.add_variable(as_type(value.dtype), list(value.shape), name)
        poputil.map_tensor_linearly(graph, tensors[name])
        graph.create_host_write(name, tensors[name])
    prog = Sequence()
    result = build(graph, tensors, prog)
    outputs = result if isinstance(result, dict) else {"out": result}
    for name, tensor in outputs.items():
        graph.create_host_read(name, tensor)
    _, out = run_program(graph, device, prog, inputs, reads=list(outputs))
    return graph, out


def op_contexts(graph: Graph, op: str) -> list:
    """The debug contexts the library op ``op`` made at its top level."""
    return [c for c in graph.debug.items if c.api == op]
