"""Reduction codelets: each vertex reduces groups of ``num_partials`` inputs to one output."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from ipu_engine.codelets import kernels, team
from ipu_engine.codelets.partials_runs import ShiftedPartials, output_span, shifted_partials
from ipu_engine.common.types import FLOAT, UNSIGNED_INT, Type
from ipu_engine.poplar import workers
from ipu_engine.poplar.arrays import memory_view
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes

REDUCE_UFUNCS: dict[str, np.ufunc] = {
    "ADD": np.add,
    "SQUARE_ADD": np.add,
    "MUL": np.multiply,
    "MAX": np.maximum,
    "MIN": np.minimum,
    "LOGICAL_AND": np.logical_and,
    "LOGICAL_OR": np.logical_or,
}


class ReduceVertex(Vertex):
    """Outputs of a vertex each reduce ``num_partials`` consecutive inputs."""

    op: ClassVar[str]
    cycles_per_partial: ClassVar[float] = 0.5
    supervisor = True
    code_bytes = 520

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        return (
            SUPERVISOR_OVERHEAD_CYCLES
            + sizes.elements("in") * cls.cycles_per_partial
            + sizes.elements("out") * 4
        )

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return sizes.elements("in").astype(np.int64)

    @classmethod
    def group_starts(cls, batch: VertexBatch) -> np.ndarray:
        """Start of every output's group in ``batch["in"]``, vectorised over vertices."""
        out_counts = batch.sizes("out")
        in_starts = batch.offsets("in")[:-1]
        out_starts = batch.offsets("out")[:-1]
        g = batch.state("numPartials").astype(np.int64)
        local = np.arange(int(out_counts.sum()), dtype=np.int64) - np.repeat(out_starts, out_counts)
        return np.repeat(in_starts, out_counts) + local * np.repeat(g, out_counts)


@functools.cache
def reduce_codelet(
    op: str, dtype: Type, partials_major: bool = False, out_type: Type | None = None
) -> type[Vertex]:
    """The reduce codelet of ``op`` on ``dtype``. ``partials_major``: a vertex's inputs
    are its first partial of every output, then its second, ... (so that they are runs of
    a partials tensor); the same vertex to the model, another inner loop to the engine.
    ``out_type`` (default ``dtype``): results are reduced in ``dtype`` and rounded to it
    (float matmul partials into a half output)."""
    out_type = out_type or dtype
    types = dtype.name if out_type == dtype else f"{dtype.name},{out_type.name}"
    ufunc = REDUCE_UFUNCS[op]
    square = op == "SQUARE_ADD"

    def compute_partials_major(cls: type, batch: VertexBatch) -> None:
        pools = (batch.pool("in"), batch.pool("out"))
        kept = batch.cache.get("kept_sum")
        if kept is not None and kept[0][0] is pools[0] and kept[0][1] is pools[1]:
            _sum_kept(kept[1])  # the views the last run found, memory's values
            batch.repeat(functools.partial(_sum_kept, kept[1]))  # the next runs: this alone
            return
        shifted = shifted_partials(batch)
        if shifted is not None:
            _reduce_shifted(batch, shifted, ufunc, square)
            return
        data = batch["in"]
        if data.size == 0:
            return
        data = np.square(data) if square else data
        partials = batch.state("numPartials").astype(np.int64)
        outs = batch.sizes("out")
        # each output's first partial, and the distance between its partials
        vertex = np.repeat(np.arange(batch.count), outs)
        local = np.arange(int(outs.sum()), dtype=np.int64) - np.repeat(
            batch.offsets("out")[:-1], outs
        )
        first = batch.offsets("in")[:-1][vertex] + local
        step, depth = outs[vertex], partials[vertex]
        # partial by partial from the first, as reduceat: no identity added first
        # (0.0 + -0.0 would lose the sign of an exact -0.0 sum)
        result = data[first].copy()
        for p in range(1, int(depth.max())):
            if (depth > p).all():
                ufunc(result, data[first + p * step], out=result)
            else:  # vertices with fewer partials are done
                more = np.flatnonzero(depth > p)
                result[more] = ufunc(result[more], data[first[more] + p * step[more]])
        scale = np.repeat(batch.state("scale"), outs)
        if np.any(scale != 1):
            result = result * scale
        batch["out"][...] = result

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        data = batch["in"]
        if data.size == 0:
            return
        if square:
            data = np.square(data)
        starts = cls.group_starts(batch)
        result = ufunc.reduceat(data, starts)
        scale = np.repeat(batch.state("scale"), batch.sizes("out"))
        if np.any(scale != 1):
            result = result * scale
        batch["out"][...] = result

    cls = type(
        "Reduce",
        (ReduceVertex,),
        {
            "in_": Input(dtype),
            "out": Output(out_type),
            "numPartials": State(UNSIGNED_INT, 1),
            "scale": State(FLOAT, 1.0),
            "op": op,
            "type_name": f"popops::Reduce<popops::ReduceOperation::{op},{types}>",
            "compute_batch": classmethod(
                compute_partials_major if partials_major else compute_batch
            ),
        },
    )
    if partials_major:  # built in, but looked up by name as the plain reduce
        cls.builtin = True
        return cls
    return register_builtin(cls)


def _reduce_shifted(
    batch: VertexBatch, shifted: ShiftedPartials, ufunc: np.ufunc, square: bool
) -> None:
    """Partial by partial from the first, as ``compute_partials_major``, each partial of
    every output read straight from memory: one slice per partial spanning the outputs'
    (each output's sum in the same order, then picked out, or written as one slice when
    the outputs are the span moved elsewhere), else one gather per partial."""
    pool = batch.pool("in")
    span = shifted.span
    place = None if span is None else output_span(batch, shifted)
    if place is not None:
        lo, hi = span
        out = batch.pool("out")[place.first : place.first + hi - lo]
        moved = (shifted.depth - 1) * shifted.shift  # the last partial's span from the first
        read = (lo + min(moved, 0), hi + max(moved, 0))  # every partial read
        apart = place.first + hi - lo <= read[0] or read[1] <= place.first
        if not square and place.scale is None and out.dtype == pool.dtype and apart:
            # summed in the outputs themselves, from partial 0 (not from an identity:
            # 0.0 + -0.0 would lose the sign of an exact -0.0 sum, as ufunc.reduce does);
            # float sums in one C pass, block by block of outputs (numpy: a pass over
            # memory per partial -- a ResNet-50 run's partials are ~200 MB of it)
            if ufunc is np.add and pool.dtype == np.float32:
                partials = memory_view(pool, lo, (shifted.depth, hi - lo), (shifted.shift, 1))
                # the same views sum the next run's partials (kept while memory is the same),
                # by the team's threads a range of outputs each (the same sums: each its own)
                native = team.rows_plan(
                    lambda r: [("partials", partials[:, r], out[r])], out.size,
                    partials.nbytes + out.nbytes,
                )  # fmt: skip
                kept = (partials, out) if native is None else native
                batch.cache["kept_sum"] = ((pool, batch.pool("out")), kept)
                _sum_kept(kept)
                return
            out[...] = pool[lo:hi]
            for p in range(1, shifted.depth):
                ufunc(out, pool[lo + p * shifted.shift : hi + p * shifted.shift], out=out)
            return
        result = _sum_partials(lambda p: pool[lo + p * shifted.shift : hi + p * shifted.shift],
                               shifted.depth, ufunc, square)  # fmt: skip
        out[...] = result if place.scale is None else result * place.scale
        return
    first = shifted.first_addresses()
    if first.size == 0:
        return
    if span is not None:
        lo, hi = span
        first -= lo

        def partial(p: int) -> np.ndarray:
            return pool[lo + p * shifted.shift : hi + p * shifted.shift]
    else:

        def partial(p: int) -> np.ndarray:
            return pool[first + p * shifted.shift]

    result = _sum_partials(partial, shifted.depth, ufunc, square)
    if span is not None:
        result = result[first]
    scale = np.repeat(batch.state("scale"), batch.sizes("out"))
    if np.any(scale != 1):
        result = result * scale
    batch.output("out")[...] = result


def _sum_kept(kept: team.TeamPieces | tuple[np.ndarray, np.ndarray]) -> None:
    """A kept reduction: its team plan, or its views summed by ``kernels.sum_partials``."""
    if isinstance(kept, team.TeamPieces):
        kept.run(workers.cores())
    else:
        kernels.sum_partials(*kept)


def _sum_partials(
    partial: Callable[[int], np.ndarray], depth: int, ufunc: np.ufunc, square: bool
) -> np.ndarray:
    """``ufunc`` over partials 0, 1, ... in that order (squared first for SQUARE_ADD)."""
    result = np.square(partial(0)) if square else partial(0).copy()
    for p in range(1, depth):
        part = partial(p)
        ufunc(result, np.square(part) if square else part, out=result)
    return result
