"""A debug context and the contexts above it (its parent chain) as table rows: name, layer,
op, creating API and source location, for the Program Tree and Operations details."""

from __future__ import annotations

from typing import Any

from popvision_py.viewmodels.table import Column, ColumnTable

MISSING_DEBUG = (
    "No debug information: this report has no readable debug.cbor. Run with "
    "autoReport.outputDebugInfo (or autoReport.all) to record debug contexts."
)


def debug_chain(debug: Any, context: int, limit: int = 256) -> list[int]:
    """``context`` then its parents, outermost last. A damaged parent column (a cycle, an id
    out of range) ends the chain instead of looping."""
    chain: list[int] = []
    if debug is None:
        return chain
    seen: set[int] = set()
    while 0 <= context < len(debug) and context not in seen and len(chain) < limit:
        chain.append(context)
        seen.add(context)
        context = int(debug.parent[context])
    return chain


def debug_contexts_table(debug: Any, contexts: list[int]) -> ColumnTable:
    """Rows of the contexts given: id, name, layer, op, API and file:line."""

    def field(name: str) -> list[str]:
        return [str(getattr(debug, name)[c]) for c in contexts]

    where = [f"{debug.file[c]}:{int(debug.line[c])}" if debug.file[c] else "" for c in contexts]
    return ColumnTable(
        [
            Column("Context", list(contexts), "Debug context id", "count"),
            Column("Name", field("name"), "Debug name (name scopes joined by /)"),
            Column("Layer", field("layer"), "Outermost name scope (the model layer)"),
            Column("Op", field("op"), "Library op the context belongs to (poplin::matMul ...)"),
            Column("API", field("api"), "The API call that created the context"),
            Column("Source", where, "File and line of the call"),
        ]
    )
