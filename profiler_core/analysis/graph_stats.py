"""The size of a compiled graph at a glance: variables, vertices, edges, compute sets,
codelets, programs and program steps (what Graph Analyser's summary lists)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from profiler_core.model.profile import GraphCounts


@dataclass(frozen=True)
class GraphStatistics(GraphCounts):
    """The graph's counts and its programs'."""

    programs: int  # engine programs (Engine(..., [prog0, prog1]))
    program_steps: int


def graph_statistics(report: Any) -> GraphStatistics:
    """The graph's counts (stored beside it since profile.pop 1.3, so its columns are not
    decoded for them) and the programs section's steps (their costs are not decoded)."""
    p = report.program_steps
    return GraphStatistics(**vars(report.graph_counts), programs=len(p.roots),
                           program_steps=p.num_steps)  # fmt: skip
