"""How a compute set's codelet without ``compute_batch`` runs: ``compute`` called once
per vertex, its fields bound as numpy arrays of engine memory (``VertexRunner``)."""

from __future__ import annotations

import numpy as np

from ipu_engine.common.errors import ExecutionError
from ipu_engine.poplar.access import Access, Memory
from ipu_engine.poplar.compiler.codelet_group import CodeletGroup
from ipu_engine.poplar.vertex import Field


class VertexRunner:
    """Calls ``compute`` once per vertex with its fields bound as numpy arrays."""

    def __init__(self, group: CodeletGroup) -> None:
        self.group = group
        # per-vertex codelets bind addresses: made from runs once, here
        self._addr = {name: f.column.addr for name, f in group.fields.items()}
        self.vertices = [self._bind(i) for i in range(group.count)]
        del self._addr

    def _bind(self, i: int) -> list[tuple[str, Field, list[Access] | Access]]:
        bound = []
        for name, f in self.group.fields.items():
            col = f.column
            addr = self._addr[name]
            if f.spec.vector_of_edges:
                e0, e1 = int(col.edges_of_vertex[i]), int(col.edges_of_vertex[i + 1])
                bound.append(
                    (
                        name,
                        f.spec,
                        [
                            Access(f.type, addr[col.offsets[e] : col.offsets[e + 1]])
                            for e in range(e0, e1)
                        ],
                    )
                )
            else:
                acc = Access(f.type, addr[col.offsets[i] : col.offsets[i + 1]])
                bound.append((name, f.spec, acc))
        return bound

    def __call__(self, memory: Memory) -> None:
        g = self.group
        cls = g.codelet
        attrs = cls.attributes
        for i, bound in enumerate(self.vertices):
            vertex = cls.__new__(cls)
            given: dict[str, object] = {}
            for name, spec, acc in bound:
                value = _bind_value(memory, spec, acc)
                given[name] = value
                vertex.__dict__[attrs[name]] = value
            for name, values in g.state.items():
                vertex.__dict__[attrs[name]] = values[i]
            try:
                ok = vertex.compute()
            except Exception as exc:
                raise ExecutionError(
                    f"{self._describe(i)} raised {type(exc).__name__}: {exc}"
                ) from exc
            if ok is False:
                raise ExecutionError(f"{self._describe(i)} returned False from compute()")
            for name, spec, acc in bound:
                if spec.direction.writes:
                    self._store(
                        memory, i, name, spec, acc, given[name], vertex.__dict__[attrs[name]]
                    )

    def _describe(self, i: int) -> str:
        g = self.group
        return (
            f"vertex {int(g.first_ids[i])} ({g.codelet.type_name}) on tile {int(g.tiles[i])} "
            f"in compute set {g.compute_set.name!r}"
        )

    def _store(self, memory, i, name, spec, acc, given, result) -> None:  # noqa: ANN001
        if spec.vector_of_edges:
            for e, (edge_acc, edge_value) in enumerate(zip(acc, result, strict=True)):
                self._store_one(memory, i, f"{name}[{e}]", edge_acc, given[e], edge_value)
        else:
            self._store_one(memory, i, name, acc, given, result)

    def _store_one(self, memory, i, name, acc, given, result) -> None:  # noqa: ANN001
        if result is given and isinstance(given, np.ndarray):
            acc.store_back(memory, given)
            return
        values = np.asarray(result)
        if values.size != acc.size:
            raise ExecutionError(
                f"{self._describe(i)}: output {name!r} got {values.size} values for a field "
                f"of {acc.size} elements"
            )
        acc.store(memory, values.reshape(-1))


def _bind_value(memory: Memory, spec: Field, acc: list[Access] | Access) -> object:
    if isinstance(acc, list):
        return [a.writable(memory) if spec.direction.writes else a.read(memory) for a in acc]
    if spec.scalar:
        return acc.read(memory)[0]
    return acc.writable(memory) if spec.direction.writes else acc.read(memory)
