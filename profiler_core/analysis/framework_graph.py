"""The framework's graph a report carries (``serialized_graph.bundle``'s ``framework``
record: an ONNX model's or the front-end's traced IR) as numpy columns: one row per traced
node, edges as two id arrays, and the name scopes (layers, an ONNX node's scope) as a table
of their own, so a view can collapse a layer into one node.

A ``poplar`` record (a program written against the Poplar API) holds calls, not a graph: it
is refused with a ``ReportError`` saying so, as a report without the file is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.serialized_graph import (
    NODE_FIELDS,
    WRITTEN_WITH,
    SerializedGraph,
    read_serialized_graph,
)

SOURCE_OPS = frozenset({"input", "param", "const"})  # nodes that run nothing: data
VIEW_OPS = frozenset({"reshape", "transpose", "slice"})  # views of a result, not new ops
_FIELD = {name: k for k, name in enumerate(NODE_FIELDS)}


@dataclass(frozen=True)
class ScopeTable:
    """Every name scope that holds a node, parents before children: ``path`` is the joined
    name (``ONNX/Conv_n0``), ``op`` the framework op it stands for (``onnx::Conv``, "" for a
    plain layer)."""

    path: list[str]
    name: list[str]  # its own (last) name
    op: list[str]
    parent: np.ndarray  # int64, -1 at the top
    depth: np.ndarray  # int64, 1 at the top

    def __len__(self) -> int:
        return len(self.path)

    def ancestors(self, scope: int) -> list[int]:
        """``scope`` and the scopes above it, innermost first."""
        chain = []
        while scope >= 0:
            chain.append(scope)
            scope = int(self.parent[scope])
        return chain


@dataclass(frozen=True)
class FrameworkGraph:
    """A framework program's traced graph: node ids are row numbers, in trace order (every
    input precedes its consumer)."""

    program: str  # "onnx", "training", "inference" or "function"
    name: str  # the engine program's name
    op: list[str]
    node_name: list[str]
    key: list[str]  # the scoped name its library op call is given: ``linear0/matmul``
    shape: list[tuple[int, ...]]
    dtype: list[str]
    file: list[str]
    line: np.ndarray  # int64
    shard: np.ndarray  # int64 IPU
    stage: np.ndarray  # int64 pipeline stage, -1 outside any
    scope: np.ndarray  # int64 innermost scope (``scopes``), -1 for none
    source: np.ndarray  # bool: input, weight or constant (runs nothing)
    view: np.ndarray  # bool: a reshape, transpose or slice (aliases its input)
    edge_src: np.ndarray  # int64
    edge_dst: np.ndarray  # int64
    scopes: ScopeTable

    def __len__(self) -> int:
        return len(self.op)

    @property
    def computes(self) -> np.ndarray:
        """Nodes that run something: not data, not views."""
        return ~self.source & ~self.view

    def shape_text(self, node: int) -> str:
        """``float 1×64×112×112`` (a scalar: ``float scalar``)."""
        shape = self.shape[node]
        dims = "×".join(str(d) for d in shape) if shape else "scalar"
        return f"{self.dtype[node]} {dims}"


def framework_graph(serialized: SerializedGraph) -> FrameworkGraph:
    """The graph of a report's serialized graph (``read_serialized_graph``); a ``poplar``
    record is a ReportError naming the file and what to do."""
    record = serialized.record
    if serialized.kind != "framework":
        raise ReportError(
            serialized.path,
            "holds a Poplar program's calls, not a framework graph: the Operations graph "
            "draws models built with the front-end (ipu_engine.compile, training_model) or "
            "read from ONNX (InferenceSession)",
        )
    rows = record["trace"]["nodes"]
    try:
        return _graph_of_rows(rows, str(record.get("program", "")), str(record.get("name", "")))
    except (TypeError, ValueError, IndexError, KeyError, OverflowError) as error:
        # the reader checked the rows' outline; a field of the wrong kind is caught here
        raise ReportError(
            serialized.path, f"a node of the graph is not as written by the engine: {error}"
        ) from None


def _graph_of_rows(rows: list[list[Any]], program: str, name: str) -> FrameworkGraph:
    f = _FIELD
    scope_index: dict[tuple[str, ...], int] = {}
    paths: list[str] = []
    names: list[str] = []
    ops: list[str] = []
    parents: list[int] = []
    depths: list[int] = []
    node_scope = np.full(len(rows), -1, dtype=np.int64)
    for i, row in enumerate(rows):
        chain: tuple[str, ...] = ()
        scope = -1
        for entry in row[f["scope"]]:
            own, op = (entry[0], entry[1]) if isinstance(entry, list) else (entry, "")
            chain = (*chain, str(own))
            known = scope_index.get(chain)
            if known is None:
                known = scope_index[chain] = len(paths)
                paths.append("/".join(chain))
                names.append(str(own))
                ops.append(str(op))
                parents.append(scope)
                depths.append(len(chain))
            scope = known
        node_scope[i] = scope
    op = [str(row[f["op"]]) for row in rows]
    node_name = [str(row[f["name"]]) for row in rows]
    key = [
        f"{paths[s]}/{n}" if s >= 0 else n
        for s, n in zip(node_scope.tolist(), node_name, strict=True)
    ]
    counts = np.fromiter((len(row[f["inputs"]]) for row in rows), np.int64, len(rows))
    src = np.fromiter((k for row in rows for k in row[f["inputs"]]), np.int64, int(counts.sum()))
    dst = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    return FrameworkGraph(
        program=program,
        name=name,
        op=op,
        node_name=node_name,
        key=key,
        shape=[tuple(int(d) for d in row[f["shape"]]) for row in rows],
        dtype=[str(row[f["type"]]) for row in rows],
        file=[str(row[f["file"]]) for row in rows],
        line=_ints(rows, f["line"], 0),
        shard=_ints(rows, f["shard"], 0),
        stage=_ints(rows, f["stage"], -1),
        scope=node_scope,
        source=np.array([o in SOURCE_OPS for o in op], dtype=bool),
        view=np.array([o in VIEW_OPS for o in op], dtype=bool),
        edge_src=src,
        edge_dst=dst,
        scopes=ScopeTable(
            paths, names, ops, np.array(parents, np.int64), np.array(depths, np.int64)
        ),
    )


def _ints(rows: list[list[Any]], field: int, default: int) -> np.ndarray:
    values = (row[field] if isinstance(row[field], int) else default for row in rows)
    return np.fromiter(values, np.int64, len(rows))


def read_framework_graph(folder: Any, report_id: str | None = None) -> FrameworkGraph:
    """The framework graph of the report in ``folder`` (``serialized_graph.bundle``)."""
    return framework_graph(read_serialized_graph(folder, report_id))


__all__ = [
    "SOURCE_OPS",
    "VIEW_OPS",
    "WRITTEN_WITH",
    "FrameworkGraph",
    "ScopeTable",
    "framework_graph",
    "read_framework_graph",
]
