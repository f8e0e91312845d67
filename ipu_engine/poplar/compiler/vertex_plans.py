"""How a compute set runs: one batched numpy call per codelet, or a loop over vertices.

Codelets that define ``compute_batch`` get every vertex of the compute set at once as
concatenated columns (an ``Access`` per field); other codelets run vertex by vertex
with each field bound as a numpy array (``vertex_runner``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ipu_engine.common.errors import ExecutionError
from ipu_engine.poplar import workers
from ipu_engine.poplar.access import Access, Memory, RunsAccess, column_access, strided_rows
from ipu_engine.poplar.compiler.codelet_group import CodeletGroup
from ipu_engine.poplar.compiler.vertex_runner import VertexRunner
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.runs import expand
from ipu_engine.poplar.vertex import REPEAT, VertexBatch
from ipu_engine.poplar.vertices import ComputeSet, EdgeColumn, VertexBlock


class ComputeSetPlan:
    """Runs one compute set against engine memory."""

    def __init__(self, graph: Graph, cs: ComputeSet) -> None:
        # Templated codelets connected to different element types are different groups.
        by_codelet: dict[tuple, list[VertexBlock]] = {}
        for block in cs.blocks:
            key = (block.codelet, tuple(sorted((k, t.name) for k, t in block.edge_types.items())))
            by_codelet.setdefault(key, []).append(block)
        self.groups = [CodeletGroup(graph, cs, blocks) for blocks in by_codelet.values()]
        self.runners = [
            _BatchRunner(g) if g.codelet.compute_batch is not None else VertexRunner(g)
            for g in self.groups
        ]
        self.may_fail = any(not g.codelet.builtin for g in self.groups)

    def __call__(self, memory: Memory) -> None:
        if len(self.runners) == 1:
            self.runners[0](memory)
            return
        try:
            with workers.gathered():  # the groups' pieces handed to the helpers at once
                for runner in self.runners:
                    runner(memory)
        except ExecutionError:
            raise
        except Exception as exc:  # a part the groups gave, run as the block ended
            name = self.groups[0].compute_set.name
            raise ExecutionError(f"compute set {name!r} failed: {exc}") from exc


class _BatchRunner:
    """One ``compute_batch`` call over every vertex of the group; a field's data is read
    (gathered when not a view) only if the codelet asks for it."""

    def __init__(self, group: CodeletGroup) -> None:
        self.group = group
        self.access = {
            n: column_access(f.type, f.column._addr, f.column.runs) for n, f in group.fields.items()
        }
        self.offsets = {n: f.column.offsets for n, f in group.fields.items()}
        self.edge_offsets = {
            n: f.column.edges_of_vertex
            for n, f in group.fields.items()
            if f.column.edges_of_vertex is not None
        }
        self.cache: dict = {}  # the codelet's own, from one run to the next
        # per-vertex grids (Python tuples) are made for the codelets that ask, once
        self.grids: dict[str, list[tuple[int, int, int, int]] | None] = {}
        self.types = tuple({f.type: None for f in group.fields.values()})  # memory it uses
        # (memory's arrays, the codelet's run) while the codelet says a run is that call
        self.repeat: tuple[tuple[np.ndarray, ...], Callable[[], None]] | None = None

    def __call__(self, memory: Memory) -> None:
        g = self.group
        if self.repeat is not None:
            pools, run = self.repeat
            if all(memory[t] is pool for t, pool in zip(self.types, pools, strict=True)):
                self._call(run)
                return
            self.repeat = None  # memory was replaced: the codelet finds its views again
        data = _FieldData(self, memory)
        batch = VertexBatch(
            g.count,
            g.tiles,
            data,
            self.offsets,
            self.edge_offsets,
            g.state,
            views=lambda name: self._views(memory, name),
            per_vertex=_PerVertex(self.group, memory),
            cache=self.cache,
        )
        self._call(lambda: g.codelet.compute_batch(batch))  # type: ignore[misc]
        run = self.cache.pop(REPEAT, None)
        if run is not None and not data:  # nothing gathered to store back
            self.repeat = (tuple(memory[t] for t in self.types), run)
        for name, values in data.items():
            if g.fields[name].spec.direction.writes:
                acc = self.access[name]
                if isinstance(acc, RunsAccess):  # the addresses the gather used
                    acc.store_back(memory, values, data.addresses.get(name))
                else:
                    acc.store_back(memory, values)

    def _call(self, run: Callable[[], None]) -> None:
        g = self.group
        try:
            run()
        except Exception as exc:
            raise ExecutionError(
                f"codelet {g.codelet.type_name} failed in compute set "
                f"{g.compute_set.name!r} ({g.count} vertices): {exc}"
            ) from exc

    def _views(self, memory: Memory, name: str) -> list[tuple[int, int, int, int]] | None:
        if name not in self.grids:
            col = self.group.fields[name].column
            self.grids[name] = None if col.edges_of_vertex is not None else edge_grids(col)
        return self.grids[name]


class _PerVertex:
    """One vertex's elements of a field, read or written through its own runs (or
    addresses): per-element addresses exist for that vertex only, while used."""

    def __init__(self, group: CodeletGroup, memory: Memory) -> None:
        self.group = group
        self.memory = memory

    def _addresses(self, name: str, i: int) -> np.ndarray:
        col = self.group.fields[name].column
        if col.edges_of_vertex is not None:
            e0, e1 = int(col.edges_of_vertex[i]), int(col.edges_of_vertex[i + 1])
        else:
            e0, e1 = i, i + 1
        if col.runs is None:
            return col.addr[col.offsets[e0] : col.offsets[e1]]
        r0, r1 = int(col.run_offsets[e0]), int(col.run_offsets[e1])
        return expand(col.runs.start[r0:r1], col.runs.length[r0:r1])

    def edge_runs(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        col = self.group.fields[name].column
        if col.runs is None or col.edges_of_vertex is not None:
            return None
        return col.runs.start, col.runs.length, col.run_offsets

    def addresses(self, name: str) -> np.ndarray:
        return self.group.fields[name].column.addr

    def pool(self, name: str) -> np.ndarray:
        return self.memory[self.group.fields[name].type]

    def grid_view(self, name: str, grid: tuple[int, int, int, int]) -> np.ndarray:
        return strided_rows(self.memory[self.group.fields[name].type], *grid)

    def read(self, name: str, i: int) -> np.ndarray:
        return self.memory[self.group.fields[name].type][self._addresses(name, i)]

    def write(self, name: str, i: int, values: np.ndarray) -> None:
        self.memory[self.group.fields[name].type][self._addresses(name, i)] = values


class _FieldData(dict):
    """Field data of one batch call, read from memory on first use."""

    def __init__(self, runner: _BatchRunner, memory: Memory) -> None:
        super().__init__()
        self._runner = runner
        self._memory = memory
        self.addresses: dict[str, np.ndarray | None] = {}

    def __missing__(self, name: str) -> np.ndarray:
        f = self._runner.group.fields[name]
        acc = self._runner.access[name]
        if f.spec.direction.writes and isinstance(acc, RunsAccess):
            # an output gathered from runs is scattered back to the same addresses
            addresses = self.addresses[name] = acc.gather_addresses()
            values = acc.writable(self._memory, addresses)
        elif f.spec.direction.writes:
            values = acc.writable(self._memory)
        else:
            values = acc.read(self._memory)
        self[name] = values
        return values

    def output(self, name: str) -> np.ndarray:
        """An output every element of which the codelet writes: memory itself when the
        field is a view, else an empty buffer stored back to the field's addresses."""
        if name in self:
            return self[name]
        acc = self._runner.access[name]
        if isinstance(acc, RunsAccess) and not acc.is_view and acc.rows is None:
            self.addresses[name] = acc.gather_addresses()
        elif not isinstance(acc, Access) or acc.is_view or acc.index is None:
            return self[name]  # a view of memory (or strided rows): written in place
        values = np.empty(acc.size, dtype=self._memory[acc.type].dtype)
        self[name] = values
        return values


def edge_grids(col: EdgeColumn) -> list[tuple[int, int, int, int]] | None:
    """Per edge, (first address, rows, row length, row stride) when every edge of the
    column is equally long, equally spaced runs (a block of a matrix); else None."""
    if col.runs is None:
        return None
    start, length, ro = col.runs.start, col.runs.length, col.run_offsets
    n_edges = len(ro) - 1
    counts = np.diff(ro)
    if n_edges == 0 or (counts == 0).any():
        return None
    first = ro[:-1]
    n = length[first]
    second = np.minimum(first + 1, ro[1:] - 1)
    stride = np.where(counts > 1, start[second] - start[first], n)
    edge = np.repeat(np.arange(n_edges), counts)
    k = np.arange(start.size) - np.repeat(first, counts)
    ok = (length == n[edge]) & (start == start[first][edge] + k * stride[edge])
    if not ok.all() or (stride < n).any():
        return None
    return list(
        zip(start[first].tolist(), counts.tolist(), n.tolist(), stride.tolist(), strict=True)
    )
