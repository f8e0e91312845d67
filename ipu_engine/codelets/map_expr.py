"""Fused element-wise codelets made from a popops expression: one per expression and type."""

from __future__ import annotations

from typing import ClassVar, Protocol

import numpy as np

from ipu_engine.codelets.elementwise import ElementwiseVertex
from ipu_engine.codelets.flat_views import apply_on_views, flat_views
from ipu_engine.codelets.map_bound import bounds_of, run_bound
from ipu_engine.common.types import BOOL, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.vertex import Input, Output, VertexBatch


class Expr(Protocol):
    """What the codelet asks of a ``popops.expr`` expression: its text (the codelet's name),
    its cost per element (cycles, FLOPs), its result's kind and its value over the inputs."""

    def text(self) -> str: ...

    def cost(self) -> tuple[float, int]: ...

    def bool_result(self) -> bool: ...

    def evaluate(self, inputs: list[np.ndarray], dtype: np.dtype) -> np.ndarray: ...

    def evaluate_into(self, inputs: list[np.ndarray], dtype: np.dtype, out: np.ndarray) -> None: ...


class MapExprVertex(ElementwiseVertex):
    expr: ClassVar[Expr]
    num_inputs: ClassVar[int]

    @classmethod
    def cycles_per_element(cls) -> float:
        return max(cls.expr.cost()[0], 0.5)

    @classmethod
    def flops_per_element(cls) -> int:
        return cls.expr.cost()[1]


_CACHE: dict[tuple[str, tuple[Type, ...]], type] = {}


def _map_codelet(text: str, expr: Expr, in_types: tuple[Type, ...], out_type: Type) -> type:
    key = (text, in_types)
    if key in _CACHE:
        return _CACHE[key]
    fields = {f"in{i}": Input(t) for i, t in enumerate(in_types)}
    dtype = in_types[0].numpy_dtype

    bounds = bounds_of(text, dtype) if len(in_types) == 1 else None

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        if bounds is not None and run_bound(batch, bounds):  # ReLU6, Clip: C calls
            return
        names = tuple(f"in{i}" for i in range(cls.num_inputs))
        # on strided views of memory in the outputs' address order, as element-wise ops
        # run (an NCHW view of an NHWC activation is read where it lies, not gathered)
        views = flat_views(batch, names, "out")
        if views is not None:
            inputs = [views[n].of(batch.pool(n)) for n in names]

            def evaluate(*args: np.ndarray, out: np.ndarray) -> None:
                cls.expr.evaluate_into(list(args), dtype, out)

            # in cache-sized blocks when it transposes (an NHWC result read as NCHW)
            apply_on_views(evaluate, inputs, views["out"].of(batch.pool("out")))
            return
        inputs = [batch[n] for n in names]
        cls.expr.evaluate_into(inputs, dtype, batch["out"])

    types = ",".join(t.name for t in in_types)
    cls = type(
        "MapExpr",
        (MapExprVertex,),
        {
            **fields,
            "out": Output(out_type),
            "expr": expr,
            "num_inputs": len(in_types),
            "type_name": f"popops::map::MapExpr<{text},{types}>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    _CACHE[key] = register_builtin(cls)
    return cls


def map_codelet(expr: Expr, in_types: tuple[Type, ...]) -> type:
    out_type = BOOL if expr.bool_result() else in_types[0]
    return _map_codelet(expr.text(), expr, in_types, out_type)
