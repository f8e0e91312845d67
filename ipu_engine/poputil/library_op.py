"""What every library op needs: its debug context, broadcasting, per-tile vertex splits.

Element-wise ops make one vertex per tile holding output elements, with every
operand's matching elements as its edges (so an operand mapped elsewhere is exchanged).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_engine import pvti
from ipu_engine.common.arguments import host_values, mapping_arg, name_arg
from ipu_engine.common.errors import GraphError, ProgramError, ShapeError
from ipu_engine.poplar.graph import Graph, graph_arg
from ipu_engine.poplar.program import Execute, Program
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertex import Vertex
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poputil.tile_mapping import map_tensor_linearly


@contextlib.contextmanager
def op_context(
    graph: Graph, op: str, debug_prefix: str, args: dict[str, Any] | None = None
) -> Iterator[int]:
    """Everything a library op creates belongs to one debug context named after it; with
    PVTI on, building the op is a span on the host's Poplar channel. The graph and the
    debug prefix every op takes are checked here, once for all of them."""
    graph_arg(graph, op)
    name_arg(debug_prefix, f"{op}: the debug prefix")
    pvti.current_writer()  # decides from PVTI_OPTIONS whether this process traces
    with (
        pvti.Tracepoint(pvti.tracePoplar, f"{op}({debug_prefix})" if debug_prefix else op),
        graph.debug.op(op, debug_prefix, args) as debug_id,
    ):
        yield debug_id


def add_program(prog: Program, program: Program, debug_id: int) -> None:
    if not isinstance(prog, SequenceProgram):
        raise ProgramError(f"library ops append to a Sequence program; got {type(prog).__name__}")
    program.debug_id = debug_id
    prog.add(program)


def check_tensors(graph: Graph, op: str, *tensors: Tensor) -> None:
    graph_arg(graph, op)
    for t in tensors:
        if not isinstance(t, Tensor):
            raise GraphError(f"{op}: expected a Tensor, got {type(t).__name__}")
        if t.graph is not graph:
            raise GraphError(f"{op}: tensor {t.name!r} belongs to another graph")


def broadcast_shape(op: str, tensors: Sequence[Tensor]) -> tuple[int, ...]:
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*(t.shape for t in tensors)))
    except ValueError:
        shapes = " and ".join(f"{t.name!r} {t.shape}" for t in tensors)
        raise ShapeError(f"{op}: shapes do not broadcast: {shapes}") from None


def broadcast_to(tensor: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A view of ``tensor`` repeated to ``shape`` (numpy broadcasting rules)."""
    if tensor.shape == shape:
        return tensor
    addr = np.broadcast_to(tensor.addr, shape)
    return Tensor(tensor.graph, tensor.type, addr, f"{tensor.name}.broadcast{shape}")


def output_like(
    graph: Graph, name: str, dtype: Any, shape: tuple[int, ...], candidates: Sequence[Tensor]
) -> Tensor:
    """A new variable mapped like the first operand that has the output's shape.

    If every operand is broadcast (none has the full shape), or the operand lies outside
    the graph's tile range (an op placed on another IPU), the output is spread linearly
    over the tile range.
    """
    out = graph.add_variable(dtype, shape, name)
    tiles = graph.tile_range
    for t in candidates:
        if t.shape == shape:
            copied = _map_like(graph, out, t, tiles)
            if copied is not None:
                if copied:
                    return out
                continue
            mapping = graph.tile_array(t)
            if mapping.size and (mapping.min() < tiles.start or mapping.max() >= tiles.stop):
                continue
            graph.set_tile_mapping_array(out, mapping)
            return out
    map_tensor_linearly(graph, out)
    return out


def _map_like(graph: Graph, out: Tensor, like: Tensor, tiles: range) -> bool | None:
    """Map the new variable ``out`` as ``like`` is, interval by interval, when ``like`` is
    one run of its pool (no tile per element made); False when ``like`` lies outside
    ``tiles`` (or is unmapped), None when it is not one run."""
    span, at = like.pool_range(), out.pool_range()
    if span is None or at is None or like.graph is not graph:
        return None
    start, length, run_tiles = graph.pool(like.type).tiles.intervals(*span)
    if run_tiles.size and (run_tiles.min() < tiles.start or run_tiles.max() >= tiles.stop):
        return False
    graph.pool(out.type).tiles.paint(at[0] + (start - span[0]), length, run_tiles)
    return True


@dataclass(frozen=True)
class TileSplit:
    """The elements of a tensor grouped by tile: one vertex per tile that holds any."""

    tiles: np.ndarray  # (V,) tile of each vertex
    order: np.ndarray | None  # flat element order grouped by tile, None if already grouped
    offsets: np.ndarray  # (V + 1,) start of each vertex's elements in that order

    def edge(self, tensor: Tensor) -> EdgeColumn:
        """``tensor``'s elements matching each vertex: one run per vertex for a whole
        variable in tile order, else addresses (kept as runs where they are runs)."""
        span = tensor.pool_range()
        if span is not None and self.order is None:
            runs = Runs(span[0] + self.offsets[:-1], np.diff(self.offsets))
            run_offsets = np.arange(self.offsets.size, dtype=np.int64)
            return EdgeColumn(None, self.offsets, runs=runs, run_offsets=run_offsets)
        addr = tensor.flat_addr()
        if self.order is not None:
            addr = addr[self.order]
        return EdgeColumn(addr, self.offsets).compressed()


def split_by_tile(graph: Graph, tensor: Tensor) -> TileSplit:
    tiles = graph.tile_array(tensor)
    order = None
    if tiles.size > 1 and np.any(tiles[1:] < tiles[:-1]):
        order = np.argsort(_sort_key(tiles), kind="stable")
        tiles = tiles[order]
    if tiles.size == 0:
        return TileSplit(np.zeros(0, np.int32), None, np.zeros(1, np.int64))
    cuts = np.flatnonzero(np.diff(tiles)) + 1
    starts = np.concatenate(([0], cuts))
    offsets = np.concatenate((starts, [tiles.size])).astype(np.int64)
    return TileSplit(tiles[starts].astype(np.int32), order, offsets)


def _sort_key(tiles: np.ndarray) -> np.ndarray:
    """``tiles`` as uint16 when every one fits: a stable sort of 16-bit keys is a radix
    sort (the same order, a few times faster over a tensor's millions of elements)."""
    if tiles.size and int(tiles.min()) >= 0 and int(tiles.max()) <= np.iinfo(np.uint16).max:
        return tiles.astype(np.uint16)
    return tiles


def execute_per_tile(
    graph: Graph,
    name: str,
    codelet: type[Vertex],
    by: Tensor,
    edges: dict[str, Tensor],
    prog: Program,
    debug_id: int,
    state: dict[str, Any] | None = None,
) -> None:
    """One compute set ``name`` with a vertex of ``codelet`` on every tile holding part of
    ``by``; each field in ``edges`` gets its tensor's elements matching those of ``by``
    (tensors must have ``by``'s shape); ``state`` values go to every vertex. Appends its
    Execute to ``prog``."""
    if not isinstance(prog, SequenceProgram):  # checked before the graph changes
        raise ProgramError(f"library ops append to a Sequence program; got {type(prog).__name__}")
    state = mapping_arg(state, f"{name}: the state values")
    converted = {}
    for field, value in state.items():
        what = f"{name}: state field {field!r}"
        values = host_values(value, codelet.state[field].type, what, GraphError)
        if values.size != 1:
            raise GraphError(f"{what} holds one value, got {values.size}")
        converted[field] = values.reshape(-1)[0]
    cs = graph.add_compute_set(name)
    split = split_by_tile(graph, by)
    block = graph.add_vertex_block(
        cs, codelet, split.tiles, {field: split.edge(t) for field, t in edges.items()}
    )
    for field, value in converted.items():
        block.state[field][:] = value
    add_program(prog, Execute(cs), debug_id)
