"""What runs on a set of tiles: the compute sets with vertices there, the vertices per codelet
(vertex type) with their code, and the exchange steps moving data in and out of them.

Each answer is a few vectorised passes over the graph's vertex counts (``vc_*``) and the
programs' per-tile exchange rows (``exch_*``) through one boolean tile mask, so a selection
of thousands of tiles on a 16-IPU report costs milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_programs, checked_target
from profiler_core.analysis.memory import memory_table
from profiler_core.model.kinds import MemoryCategory, StepKind

EXCHANGE_MEMORY = (
    MemoryCategory.INTERNAL_EXCHANGE_CODE,
    MemoryCategory.HOST_EXCHANGE_CODE,
    MemoryCategory.GLOBAL_EXCHANGE_CODE,
    MemoryCategory.EXCHANGE_BUFFERS,
)


def tile_mask(num_tiles: int, tiles: np.ndarray) -> np.ndarray:
    """A bool per tile, True on ``tiles``; IndexError for a tile off the target."""
    tiles = np.asarray(tiles, dtype=np.int64).reshape(-1)
    if tiles.size and (tiles.min() < 0 or tiles.max() >= num_tiles):
        raise IndexError(f"tiles go from 0 to {num_tiles - 1}")
    mask = np.zeros(num_tiles, dtype=bool)
    mask[tiles] = True
    return mask


def _sum_by(keys: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, keys, values.astype(np.int64))  # exact integers, unlike bincount's floats
    return out


def _distinct_per(keys: np.ndarray, other: np.ndarray, other_size: int, size: int) -> np.ndarray:
    """How many distinct ``other`` values each key has among the rows."""
    pairs = np.unique(keys.astype(np.int64) * max(other_size, 1) + other)
    return np.bincount(pairs // max(other_size, 1), minlength=size).astype(np.int64)


@dataclass(frozen=True)
class ComputeSetsOnTiles:
    """Compute sets with vertices on the selected tiles, most vertices first."""

    cs: np.ndarray  # int64 compute set ids
    names: list[str]
    vertices: np.ndarray  # int64 vertices of it on the selected tiles
    tiles: np.ndarray  # int64 selected tiles it has vertices on
    codelets: np.ndarray  # int64 distinct vertex types of it there
    state_bytes: np.ndarray | None  # int64 vertex instance state there, when recorded
    cycles: np.ndarray  # int64 most compute cycles of it on one selected tile (-1 unknown)
    steps: np.ndarray  # int64 program steps that execute it

    def __len__(self) -> int:
        return len(self.cs)


def compute_sets_on_tiles(report: object, tiles: np.ndarray) -> ComputeSetsOnTiles:
    """Every compute set with a vertex on ``tiles``: its vertices, tiles, codelets, vertex
    state bytes (reports that record each codelet's state size), cycles and steps."""
    g = checked_graph(report)
    mask = tile_mask(checked_target(report).num_tiles, tiles)
    rows = mask[g.vc_tile]
    cs, vtype = g.vc_cs[rows].astype(np.int64), g.vc_type[rows].astype(np.int64)
    count = g.vc_count[rows].astype(np.int64)
    n, types = len(g.cs_name), len(g.vt_name)
    vertices = _sum_by(cs, count, n)
    on_tiles = _distinct_per(cs, g.vc_tile[rows].astype(np.int64), mask.size, n)
    codelets = _distinct_per(cs, vtype, types, n)
    state_size = getattr(g, "vt_state_bytes", None)
    state = None if state_size is None else _sum_by(cs, count * state_size[vtype], n)
    cycles = np.full(n, -1, dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    programs = _programs_or_none(report)
    if programs is not None:
        on = mask[programs.cst_tile]
        np.maximum.at(cycles, programs.cst_cs[on].astype(np.int64), programs.cst_cycles[on])
        step_cs = programs.step_cs[programs.step_cs >= 0].astype(np.int64)
        steps = np.bincount(step_cs, minlength=n).astype(np.int64)
    found = np.flatnonzero(vertices)
    found = found[np.lexsort((found, -vertices[found]))]
    return ComputeSetsOnTiles(
        cs=found,
        names=g.strings.take(g.cs_name[found]),
        vertices=vertices[found],
        tiles=on_tiles[found],
        codelets=codelets[found],
        state_bytes=None if state is None else state[found],
        cycles=cycles[found],
        steps=steps[found],
    )


@dataclass(frozen=True)
class VerticesOnTiles:
    """Vertices on the selected tiles per codelet (vertex type), most vertices first."""

    vertex_type: np.ndarray  # int64 vertex type ids
    names: list[str]
    vertices: np.ndarray  # int64
    tiles: np.ndarray  # int64 selected tiles with at least one
    compute_sets: np.ndarray  # int64 distinct compute sets using it there
    code_bytes: np.ndarray  # int64 its code on those tiles (paid once per tile)
    supervisor: np.ndarray  # bool

    def __len__(self) -> int:
        return len(self.vertex_type)


def vertices_on_tiles(report: object, tiles: np.ndarray) -> VerticesOnTiles:
    """Vertices per codelet on ``tiles``, with the code each codelet costs there."""
    g = checked_graph(report)
    mask = tile_mask(checked_target(report).num_tiles, tiles)
    rows = mask[g.vc_tile]
    vtype, tile = g.vc_type[rows].astype(np.int64), g.vc_tile[rows].astype(np.int64)
    n = len(g.vt_name)
    vertices = _sum_by(vtype, g.vc_count[rows], n)
    on_tiles = _distinct_per(vtype, tile, mask.size, n)
    compute_sets = _distinct_per(vtype, g.vc_cs[rows].astype(np.int64), len(g.cs_name), n)
    found = np.flatnonzero(vertices)
    found = found[np.lexsort((found, -vertices[found]))]
    return VerticesOnTiles(
        vertex_type=found,
        names=g.strings.take(g.vt_name[found]),
        vertices=vertices[found],
        tiles=on_tiles[found],
        compute_sets=compute_sets[found],
        code_bytes=on_tiles[found] * g.vt_code_bytes[found].astype(np.int64),
        supervisor=g.vt_supervisor[found].astype(bool),
    )


@dataclass(frozen=True)
class ExchangesOnTiles:
    """Exchange steps moving data to or from the selected tiles, in step order, and the
    exchange code and buffers those tiles hold."""

    step: np.ndarray  # int64 program step ids
    names: list[str]
    kinds: list[str]  # Poplar's step kind name
    bytes_in: np.ndarray  # int64 received by the selected tiles
    bytes_out: np.ndarray  # int64 sent by them
    tiles: np.ndarray  # int64 selected tiles taking part
    memory: dict[MemoryCategory, int]  # exchange code and buffers bytes on the selection

    def __len__(self) -> int:
        return len(self.step)


def exchanges_on_tiles(report: object, tiles: np.ndarray) -> ExchangesOnTiles:
    """Bytes in and out of ``tiles`` per exchange step, and their exchange memory."""
    target = checked_target(report)
    mask = tile_mask(target.num_tiles, tiles)
    table = memory_table(report)
    selected = np.flatnonzero(mask)
    memory = {c: int(table.by_category[int(c), selected].sum()) for c in EXCHANGE_MEMORY}
    p = checked_programs(report)
    rows = mask[p.exch_tile] & ((p.exch_bytes_in > 0) | (p.exch_bytes_out > 0))
    step = p.exch_step[rows].astype(np.int64)
    n = p.num_steps
    bytes_in = _sum_by(step, p.exch_bytes_in[rows], n)
    bytes_out = _sum_by(step, p.exch_bytes_out[rows], n)
    on_tiles = _distinct_per(step, p.exch_tile[rows].astype(np.int64), mask.size, n)
    found = np.flatnonzero(on_tiles)
    kinds = p.step_kind[found].tolist()
    return ExchangesOnTiles(
        step=found,
        names=report.graph.strings.take(p.step_name[found]),  # type: ignore[attr-defined]
        kinds=[StepKind(k).poplar_name for k in kinds],
        bytes_in=bytes_in[found],
        bytes_out=bytes_out[found],
        tiles=on_tiles[found],
        memory=memory,
    )


def _programs_or_none(report: object) -> object | None:
    """The programs when they read and fit the graph; compute sets are still listed without."""
    from profiler_core.errors import ReportError

    try:
        return checked_programs(report)
    except ReportError:
        return None
