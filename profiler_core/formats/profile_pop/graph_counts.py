"""The graph's counts in ``profile.pop`` 1.3 (``Profile.graphCounts``): decoded alone for a
first page, and held against the graph's own columns when those are decoded, so a file whose
counts and columns disagree is refused instead of showing two different graphs."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from profiler_core.errors import ReportError
from profiler_core.model.profile import GraphCounts, GraphData


def _schema_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


COUNT_FIELDS = tuple((f.name, _schema_name(f.name)) for f in fields(GraphCounts))
"""(``GraphCounts`` field, ``Profile.graphCounts`` field) of every count, in order."""


def decode_graph_counts(root: Any, version: str) -> GraphCounts:
    """The counts a 1.3 file stores; ReportError (without a path) when absent or negative."""
    if not root._has("graphCounts"):
        raise ReportError(None, f"its counts are missing (a {version} file has them)")
    stored = root.graphCounts
    counts = GraphCounts(**{name: int(getattr(stored, field)) for name, field in COUNT_FIELDS})
    for name, _ in COUNT_FIELDS:
        value = getattr(counts, name)
        if value < (-1 if name == "edges" else 0):
            raise ReportError(None, f"its counts give {value} {name.replace('_', ' ')}")
    return counts


def check_counts(graph: GraphData, counts: GraphCounts) -> None:
    """ReportError (without a path) unless ``counts`` are the counts of ``graph``."""
    found = graph.counts()
    if found != counts:
        differ = [
            f"{name.replace('_', ' ')} {getattr(counts, name)} (columns: {getattr(found, name)})"
            for name, _ in COUNT_FIELDS
            if getattr(counts, name) != getattr(found, name)
        ]
        raise ReportError(None, f"its counts differ from its columns: {', '.join(differ)}")
