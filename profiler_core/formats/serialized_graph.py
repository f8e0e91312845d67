"""``serialized_graph.bundle``: the graph and programs of a report, as data a what-if can
re-plan -- Poplar's ``autoReport.outputSerializedGraph``, in a format of ours.

An array bundle (``array_bundle``: magic, blake2b-256 checksum, CBOR description, raw
arrays) of kind ``popvision-py serialized graph``. Its description is
``{"reportId": str, "record": {...}}``; the record is one of two kinds, documented in
``formats/README.md``: ``poplar`` (the calls a Poplar program made: variables, tile
mappings, library op calls with operands and options, programs) or ``framework`` (a
front-end or ONNX program's traced IR: nodes, ops, attributes, shapes, weights' shapes,
stages, IPUs). This reader checks the checksum, the version and the record's outline;
what the calls and nodes mean is the engine's business (``ipu_engine.replan``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.array_bundle import read_bundle, write_bundle

GRAPH_FILE = "serialized_graph.bundle"
KIND = "popvision-py serialized graph"
FORMAT_MAJOR, FORMAT_MINOR = 1, 0
MAX_GRAPH_BYTES = 4 * 1024**3
RECORD_KINDS = ("poplar", "framework")
WRITTEN_WITH = "autoReport.outputSerializedGraph (or autoReport.all)"


@dataclass(frozen=True)
class SerializedGraph:
    """A report's serialized graph: which report it belongs to, the record, its arrays."""

    path: Path
    report_id: str
    record: dict[str, Any]
    arrays: dict[str, np.ndarray]
    format_minor: int

    @property
    def kind(self) -> str:
        return str(self.record["kind"])

    @property
    def problems(self) -> list[str]:
        """Why the record cannot be replayed ([] when it can)."""
        return [str(p) for p in self.record.get("problems", [])]


def write_serialized_graph(
    path: str | Path, report_id: str, record: dict[str, Any], arrays: dict[str, np.ndarray]
) -> None:
    """Write the file atomically (a ``ReportError`` naming it when it cannot be)."""
    meta = {"reportId": report_id, "record": record}
    write_bundle(path, KIND, (FORMAT_MAJOR, FORMAT_MINOR), meta, arrays)


def read_serialized_graph(path: str | Path, report_id: str | None = None) -> SerializedGraph:
    """The serialized graph at ``path`` (a file, or the report folder holding it), checked;
    with ``report_id``, one of another report is refused too."""
    path = Path(path)
    if path.is_dir():
        path = path / GRAPH_FILE
    if not path.exists():
        raise ReportError(
            path, f"no serialized graph: the report was written without {WRITTEN_WITH}"
        )
    bundle = read_bundle(path, KIND, FORMAT_MAJOR, MAX_GRAPH_BYTES)
    meta = bundle.meta
    if not isinstance(meta, dict) or not isinstance(meta.get("reportId"), str):
        raise ReportError(path, "the description has no report id")
    record = meta.get("record")
    _check_record(path, record)
    if report_id is not None and meta["reportId"] != report_id:
        raise ReportError(
            path,
            f"belongs to another report (id {meta['reportId']!r}, the profile's is "
            f"{report_id!r}): write the report again",
        )
    return SerializedGraph(path, meta["reportId"], record, bundle.arrays, bundle.format_minor)


def _check_record(path: Path, record: Any) -> None:
    """The record's outline: its kind and the lists and maps a replay walks."""
    if not isinstance(record, dict) or record.get("kind") not in RECORD_KINDS:
        raise ReportError(path, f"the record is not one of the kinds {', '.join(RECORD_KINDS)}")
    problems = record.get("problems", [])
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise ReportError(path, "the record's problems are not a list of texts")
    if record["kind"] == "poplar":
        _need(path, record, {"target": dict, "calls": list, "engine": dict})
        for i, call in enumerate(record["calls"]):
            ok = isinstance(call, dict) and isinstance(call.get("seq"), int)
            if (
                not ok
                or not isinstance(call.get("api"), str)
                or not isinstance(call.get("args"), dict)
            ):
                raise ReportError(path, f"call {i} is not {{seq, api, args}}")
        return
    _need(path, record, {"program": str, "options": dict, "trace": dict, "outputs": list})
    nodes = record["trace"].get("nodes")
    if not isinstance(nodes, list):
        raise ReportError(path, "the trace has no list of nodes")
    for i, node in enumerate(nodes):
        if not isinstance(node, list) or len(node) != len(NODE_FIELDS):
            raise ReportError(path, f"node {i} is not a row of {len(NODE_FIELDS)} fields")
        if node[0] != i or not isinstance(node[1], str):
            raise ReportError(path, f"node {i} has id {node[0]!r} or op {node[1]!r:.40}")
        inputs = node[2]
        if not isinstance(inputs, list) or not all(
            isinstance(k, int) and 0 <= k < i for k in inputs
        ):
            raise ReportError(path, f"node {i}'s inputs are not earlier nodes")


NODE_FIELDS = (
    "id", "op", "inputs", "shape", "type", "attrs", "shard", "stage", "scope", "file", "line",
    "name",
)  # fmt: skip
"""A framework record's node row, in order (see formats/README.md)."""


def _need(path: Path, record: dict[str, Any], fields: dict[str, type]) -> None:
    for name, kind in fields.items():
        if not isinstance(record.get(name), kind):
            raise ReportError(path, f"the record's {name!r} is not a {kind.__name__}")
