"""The size of a compiled graph at a glance: variables, vertices, edges, compute sets,
codelets, programs and program steps (what Graph Analyser's summary lists)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GraphStatistics:
    variables: int
    constants: int
    vertices: int
    edges: int  # -1 when the report does not record it (profile.pop 1.0)
    compute_sets: int
    codelets: int  # vertex types
    programs: int  # engine programs (Engine(..., [prog0, prog1]))
    program_steps: int


def graph_statistics(report: Any) -> GraphStatistics:
    """The graph's counts (stored beside it since profile.pop 1.3, so its columns are not
    decoded for them) and the programs section's."""
    g, p = report.graph_counts, report.programs
    return GraphStatistics(
        variables=g.variables,
        constants=g.constants,
        vertices=g.vertices,
        edges=g.edges,
        compute_sets=g.compute_sets,
        codelets=g.codelets,
        programs=len(p.roots),
        program_steps=p.num_steps,
    )
