"""Debug contexts as group labels: by library op (``poplin::matMul``), by layer (the outermost
name scope), by operation name (the debug name of the op call, ``m4``) or by each context's
own full name. Variables, compute sets and steps carry debug context ids; these turn them
into groups with one vectorised lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

GROUPINGS = ("op", "layer", "name", "context")


def debug_column(debug: Any, column: str, ids: np.ndarray) -> list[str]:
    """``debug.<column>`` of each id ("" for -1, out-of-range ids, or no debug contexts)."""
    if debug is None:
        return [""] * len(ids)
    values = getattr(debug, column)
    return [values[i] if 0 <= i < len(values) else "" for i in np.asarray(ids).tolist()]


def operation_contexts(debug: Any) -> np.ndarray:
    """For each context, the nearest context at or above it that is a library op call (its
    API is its op), else itself. Parents normally precede children; a parent that does not
    is ignored, so a damaged file cannot send the walk round a cycle."""
    ops, apis = debug.op, debug.api
    parents = np.asarray(debug.parent).tolist()
    is_call = [bool(op) and api == op for op, api in zip(ops, apis, strict=True)]
    owner = list(range(len(ops)))
    for i, up in enumerate(parents):
        if not is_call[i] and 0 <= up < i and is_call[owner[up]]:
            owner[i] = owner[up]
    return np.array(owner, dtype=np.int64)


def context_labels(debug: Any, group_by: str) -> list[str]:
    """One label per debug context for ``group_by`` in ``GROUPINGS``."""
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {', '.join(GROUPINGS)}, not {group_by!r}")
    if debug is None:
        return []
    if group_by == "op":
        return list(debug.op)
    if group_by == "layer":
        return list(debug.layer)
    if group_by == "context":
        return list(debug.name)
    names = debug.name
    return [names[i] for i in operation_contexts(debug).tolist()]


@dataclass(frozen=True)
class DebugGroups:
    """Groups of debug contexts: ``labels[group_of(ids)]`` is the label of each id.

    Label "" holds everything without a debug context (id -1, or no debug.cbor) and
    contexts whose op or layer is empty.
    """

    labels: list[str]  # sorted, unique
    _group_of_context: np.ndarray  # int64 (contexts + 1,): the last entry is for id -1

    def __len__(self) -> int:
        return len(self.labels)

    def group_of(self, ids: np.ndarray) -> np.ndarray:
        """The group of each debug context id; -1 (no context) and ids without contexts
        go to the "" group."""
        ids = np.asarray(ids, dtype=np.int64)
        known = len(self._group_of_context) - 1
        ids = np.where((ids >= 0) & (ids < known), ids, -1)
        return self._group_of_context[ids]  # -1 indexes the last entry


def debug_groups(debug: Any, group_by: str) -> DebugGroups:
    labels = context_labels(debug, group_by) + [""]
    # A dict, not np.unique: a numpy string array pads every label to the longest one.
    unique = sorted(set(labels))
    index = {label: i for i, label in enumerate(unique)}
    return DebugGroups(unique, np.array([index[label] for label in labels], dtype=np.int64))
