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
    """Counts from the graph and programs sections (column lengths and one sum)."""
    g, p = report.graph, report.programs
    return GraphStatistics(
        variables=int(len(g.var_name) - g.var_is_constant.sum()),
        constants=int(g.var_is_constant.sum()),
        vertices=int(g.vc_count.sum(dtype="int64")),
        edges=int(g.num_edges),
        compute_sets=len(g.cs_name),
        codelets=len(g.vt_name),
        programs=len(p.roots),
        program_steps=p.num_steps,
    )
