"""The operation and the user's file:line behind variables, steps and compute sets, from
their debug contexts (``DebugData.file`` / ``line``; text columns decode only the rows asked)."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.analysis.debug_groups import debug_column, op_call_owners
from profiler_core.insights.findings import SourceRef


def source_refs(debug: Any, ids: np.ndarray) -> list[SourceRef]:
    """A ``SourceRef`` per debug context id: the op call that owns it (``m4``,
    ``poplin::matMul``) and the context's own file and line (-1 or no debug: empty)."""
    ids = np.asarray(ids, dtype=np.int64)
    if debug is None or not len(ids):
        return [SourceRef() for _ in range(len(ids))]
    owners = op_call_owners(debug, ids)
    calls = debug_column(debug, "name", owners)
    ops = debug_column(debug, "op", ids)
    files = debug_column(debug, "file", ids)
    lines = np.asarray(debug.line, dtype=np.int64)
    inside = (ids >= 0) & (ids < len(lines))
    line = np.where(inside, lines[np.where(inside, ids, 0)], 0).tolist()
    # a context inside no op call (a user's own variable) is its own "operation"
    return [
        SourceRef(operation=calls[i], op=ops[i], file=files[i], line=int(line[i]))
        for i in range(len(ids))
    ]


def source_ref(debug: Any, context: int) -> SourceRef:
    return source_refs(debug, np.array([context]))[0]
