"""What popnn's LSTM and GRU share: the input projection of every step in one grouped matmul,
the order each direction reads the sequence in, the cell vertices' blocks over the tiles,
state variables, one cell compute set per step, and the output sequence put back in time
order.

A reverse direction reads each batch entry's sequence from its last valid step back to
the first: without sequence lengths, a reversed view; with them, a ``popops.gather`` of
the rows ``P(k) = len - 1 - k`` (``k < len``; others stay in place, masked by the cell),
whose index is worked out on the IPU from the lengths, since they are known only at run
time. ``P`` is its own inverse: the same gather puts the outputs back in time order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_engine import popops
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.common.types import INT
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Copy, Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor, concat
from ipu_engine.poplar.vertex import Vertex
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poplin.matmul import mat_mul_grouped
from ipu_engine.popops import expr
from ipu_engine.poputil.library_op import add_program, broadcast_to

#: the layouts of a cell's fields: per direction, batch row, gate and unit (D, B, G, H);
#: the bias per direction, gate and unit (D, G, H); the state per direction, row and unit
ROW_GATES, GATES, ROWS = "row_gates", "gates", "rows"


@dataclass(frozen=True)
class CellPlan:
    """Cell vertices: each one direction's block of batch rows and of hidden units."""

    directions: int
    batch: int
    hidden: int
    blocks: np.ndarray  # [V, 5]: direction, first row, end row, first unit, end unit
    tiles: np.ndarray  # [V] int32

    def positions(self, layout: str, gates: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Each vertex's elements of a field (flat positions in its [D, B, G, H], [D, G, H]
        or [D, B, H] tensor) and where each vertex's start: (positions, offsets)."""
        parts = []
        d_, b_, h_ = self.directions, self.batch, self.hidden
        for d, b0, b1, j0, j1 in self.blocks.tolist():
            units = np.arange(j0, j1)
            if layout == ROW_GATES:
                grid = np.ix_([d], np.arange(b0, b1), np.arange(gates), units)
                parts.append(np.ravel_multi_index(grid, (d_, b_, gates, h_)).reshape(-1))
            elif layout == GATES:
                grid = np.ix_([d], np.arange(gates), units)
                parts.append(np.ravel_multi_index(grid, (d_, gates, h_)).reshape(-1))
            else:
                grid = np.ix_([d], np.arange(b0, b1), units)
                parts.append(np.ravel_multi_index(grid, (d_, b_, h_)).reshape(-1))
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([p.size for p in parts], out=offsets[1:])
        return np.concatenate(parts), offsets

    def row_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Each vertex's batch rows (for the sequence lengths [B])."""
        parts = [np.arange(b0, b1) for _, b0, b1, _, _ in self.blocks.tolist()]
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([p.size for p in parts], out=offsets[1:])
        return np.concatenate(parts), offsets

    def state_tiles(self) -> np.ndarray:
        """[D, B, H]: the tile of each state element (its vertex's)."""
        tiles = np.zeros((self.directions, self.batch, self.hidden), dtype=np.int32)
        for (d, b0, b1, j0, j1), tile in zip(
            self.blocks.tolist(), self.tiles.tolist(), strict=True
        ):
            tiles[d, b0:b1, j0:j1] = tile
        return tiles


def cell_plan(graph: Graph, directions: int, batch: int, hidden: int) -> CellPlan:
    """As many vertices as tiles at most: rows split when there are more rows than tiles,
    else units split so that every tile works (blocks of at least 4 units)."""
    tiles_avail = graph.tile_range
    rows = directions * batch
    row_block = max(1, -(-rows // len(tiles_avail)))
    row_blocks = -(-batch // row_block)
    unit_blocks = max(1, min(-(-hidden // 4), len(tiles_avail) // (directions * row_blocks)))
    unit_block = -(-hidden // unit_blocks)
    blocks = [
        (d, b0, min(b0 + row_block, batch), j0, min(j0 + unit_block, hidden))
        for d in range(directions)
        for b0 in range(0, batch, row_block)
        for j0 in range(0, hidden, unit_block)
    ]
    count = len(blocks)
    tiles = (tiles_avail.start + np.arange(count) * len(tiles_avail) // count).astype(np.int32)
    return CellPlan(directions, batch, hidden, np.array(blocks, dtype=np.int64), tiles)


def check_sequence(api: str, x: Tensor, others: Sequence[Tensor | None]) -> None:
    """``x`` a non-empty float [T, B, I]; ``others`` (the weights first) of its type, or
    INT; the weights [D, X, G*H]."""
    if x.rank != 3 or 0 in x.shape:
        raise ShapeError(f"{api}: input {x.name!r} {x.shape} must be a non-empty [T, B, I]")
    for w in others[:2]:
        if w is not None and (w.rank != 3 or 0 in w.shape):
            raise ShapeError(f"{api}: weights {w.name!r} {w.shape} must be [D, X, gates x H]")
    for t in (x, *others):
        if t is not None and t.type != x.type and t.type != INT:
            raise TypeMismatchError(f"{api}: {t.name!r} is {t.type!r}, not {x.type!r}")
    if x.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs float or half, {x.name!r} is {x.type!r}")
    lengths = others[-1]
    if lengths is not None and lengths.type.numpy_dtype.kind not in "iu":
        raise TypeMismatchError(
            f"{api}: sequence lengths {lengths.name!r} must be integers, not {lengths.type!r}"
        )


def expect_shape(api: str, t: Tensor | None, shape: tuple[int, ...], what: str) -> None:
    if t is not None and t.shape != shape:
        raise ShapeError(f"{api}: {what} {t.name!r} {t.shape} must be {shape}")


def reversal_index(graph: Graph, seq_lens: Tensor, steps: int, prog: SequenceProgram) -> Tensor:
    """[T * B] INT: row ``P(k) * B + b`` for the reverse direction's step k of batch row b."""
    batch = seq_lens.shape[0]
    step = graph.add_constant(INT, [steps, 1], np.arange(steps)[:, None], "step")
    row = graph.add_constant(INT, [1, batch], np.arange(batch)[None, :], "row")
    for constant in (step, row):
        graph.set_tile_mapping(constant, graph.tile_range.start)
    lengths = seq_lens if seq_lens.type == INT else popops.cast(graph, seq_lens, INT, prog)
    _1, _2, _3 = expr._1, expr._2, expr._3
    index = expr.select((_2 - 1 - _1) * batch + _3, _1 * batch + _3, _1 < _2)
    rows = popops.map(graph, index, [step, lengths.reshape([1, batch]), row], prog, "reversal")
    return rows.reshape([steps * batch])


def in_step_order(
    graph: Graph, seq: Tensor, reverse: bool, index: Tensor | None, prog: SequenceProgram, name: str
) -> Tensor:
    """``seq`` [T, B, X] in the order a direction reads (or writes) it."""
    if not reverse:
        return seq
    if index is None:
        return seq.reverse(0)
    steps, batch, width = seq.shape
    rows = popops.gather(graph, seq.reshape([steps * batch, width]), index, 0, prog, name)
    return rows.reshape([steps, batch, width])


def input_projection(
    graph: Graph,
    x: Tensor,
    weights: Tensor,
    prog: SequenceProgram,
    options: Mapping[str, Any] | None,
) -> Tensor:
    """[D, T, B, G*H]: every step's input times each direction's input weights, one
    grouped matmul (as PopLibs' ``lstmFwd`` precalculates them)."""
    steps, batch, size = x.shape
    directions = weights.shape[0]
    rows = broadcast_to(x.reshape([1, steps * batch, size]), (directions, steps * batch, size))
    out = mat_mul_grouped(graph, rows, weights, prog, "inputProjection", options)
    return out.reshape([directions, steps, batch, weights.shape[2]])


def state(
    graph: Graph,
    name: str,
    plan: CellPlan,
    initial: Tensor | None,
    dtype: Any,
    prog: SequenceProgram,
    debug_id: int,
) -> Tensor:
    """A [D, B, H] state laid out with the cell vertices, set to ``initial`` or zero."""
    var = graph.add_variable(dtype, [plan.directions, plan.batch, plan.hidden], name)
    graph.set_tile_mapping_array(var, plan.state_tiles())
    if initial is None:
        popops.zero(graph, var, prog, f"{name}/init")
    else:
        add_program(prog, Copy(initial, var), debug_id)
    return var


def zeros(graph: Graph, dtype: Any, shape: list[int], name: str) -> Tensor:
    const = graph.add_constant(dtype, shape, 0.0, name)
    graph.set_tile_mapping(const, graph.tile_range.start)
    return const


def cell_step(
    graph: Graph,
    codelets: Sequence[type[Vertex]],
    plan: CellPlan,
    fields: Mapping[str, tuple[Tensor, tuple[np.ndarray, np.ndarray]]],
    step: int,
    prog: SequenceProgram,
    debug_id: int,
    name: str,
) -> None:
    """One compute set over the plan's blocks, each direction's vertices of its codelet in
    ``codelets``: each field is its tensor and every vertex's positions in it."""
    cs = graph.add_compute_set(name)
    addresses = {f: t.flat_addr() for f, (t, _) in fields.items()}
    for codelet in dict.fromkeys(codelets):
        directions = [d for d, c in enumerate(codelets) if c is codelet]
        chosen = np.flatnonzero(np.isin(plan.blocks[:, 0], directions))
        edges = {}
        for field, (_, (positions, offsets)) in fields.items():
            lengths = np.diff(offsets)[chosen]
            starts = np.zeros(chosen.size + 1, dtype=np.int64)
            np.cumsum(lengths, out=starts[1:])
            picked = np.repeat(offsets[chosen] - starts[:-1], lengths) + np.arange(starts[-1])
            addr = addresses[field][positions[picked]]
            edges[field] = EdgeColumn(addr, starts).compressed()
        block = graph.add_vertex_block(cs, codelet, plan.tiles[chosen], edges)
        blocks = plan.blocks[chosen]
        block.state["rows"][:] = (blocks[:, 2] - blocks[:, 1]).astype(np.uint32)
        block.state["units"][:] = (blocks[:, 4] - blocks[:, 3]).astype(np.uint32)
        block.state["step"][:] = np.full(chosen.size, step, dtype=np.uint32)
    add_program(prog, Execute(cs), debug_id)


def step_inputs(sequences: list[Tensor], step: int) -> Tensor:
    """[D, B, X]: every direction's input of step ``step``."""
    return concat([s[step].reshape([1, *s.shape[1:]]) for s in sequences], 0)


def time_ordered(
    graph: Graph,
    outputs: Tensor,
    reverse: Sequence[bool],
    index: Tensor | None,
    prog: SequenceProgram,
) -> Tensor:
    """[T, D, B, H] in time order from the cells' outputs [T, D, B, H] in step order."""
    parts = []
    for d, backwards in enumerate(reverse):
        seq = outputs[:, d]
        ordered = in_step_order(graph, seq, backwards, index, prog, f"outputs{d}")
        parts.append(ordered.reshape([ordered.shape[0], 1, *ordered.shape[1:]]))
    return concat(parts, 1)
