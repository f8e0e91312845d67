"""Debug contexts as group labels: by library op (``poplin::matMul``), by layer (the outermost
name scope), by operation name (the debug name of the op call, ``m4``), by framework op (the
outermost op call: an ONNX node, ``ONNX/Conv_12``, or a library op not called by another) and
its type (``onnx::Conv``), or by each context's own full name. Variables, compute sets and
steps carry debug context ids; these turn them into groups with one vectorised lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.analysis.groupings import GROUPINGS
from profiler_core.analysis.string_groups import group_string_ids_lazily
from profiler_core.model.lazy_columns import StringColumn, as_str_list

#: groupings that label each context by the name / op of an op call above it
_BY_OWNER = {"name": "name", "framework": "name", "framework_op": "op"}


def debug_column(debug: Any, column: str, ids: np.ndarray) -> list[str]:
    """``debug.<column>`` of each id ("" for -1, out-of-range ids, or no debug contexts)."""
    if debug is None:
        return [""] * len(ids)
    values = getattr(debug, column)
    ids = np.asarray(ids, dtype=np.int64)
    if isinstance(values, StringColumn):
        inside = (ids >= 0) & (ids < len(values))
        out = [""] * len(ids)
        for i, text in zip(np.flatnonzero(inside).tolist(), values.rows(ids[inside]), strict=True):
            out[i] = text
        return out
    return [values[i] if 0 <= i < len(values) else "" for i in ids.tolist()]


def _op_calls(debug: Any) -> list[bool]:
    """Whether each context is a library op call: its API is its (non-empty) op."""
    ops, apis = debug.op, debug.api
    if isinstance(ops, StringColumn) and isinstance(apis, StringColumn) and ops.table is apis.table:
        empty = np.diff(ops.table.offsets) == 0  # an empty string has no bytes: no decoding
        return ((ops.ids == apis.ids) & ~empty[ops.ids]).tolist()
    return [bool(op) and api == op for op, api in zip(ops, apis, strict=True)]


def op_call_mask(debug: Any) -> np.ndarray:
    """bool per context: a library (or framework) op call -- its API is its op."""
    return np.asarray(_op_calls(debug), dtype=bool)


def lazy_debug_column(debug: Any, column: str, ids: np.ndarray) -> Sequence[str]:
    """``debug_column`` as a lazy column when the contexts are: a table of 400,000 variables
    decodes only the names of the rows on screen."""
    values = None if debug is None else getattr(debug, column)
    if not isinstance(values, StringColumn):
        return debug_column(debug, column, ids)
    ids = np.asarray(ids, dtype=np.int64)
    inside = (ids >= 0) & (ids < len(values))
    return StringColumn(values.table, np.where(inside, values.ids[np.where(inside, ids, 0)], -1))


SHORT_WALK = 64
"""Levels ``op_call_owners`` climbs one by one before it answers from the whole table: honest
nesting is a few dozen levels; a damaged or hostile chain 200,000 deep costs a table pass."""


def op_call_owners(debug: Any, ids: np.ndarray) -> np.ndarray:
    """``operation_contexts`` for a few ids only: the nearest op call at or above each id
    (else the id itself; -1 and unknown ids give -1), one vectorised step per level of
    nesting, so asking about ten variables of 400,000 contexts does not walk them all.
    Chains deeper than ``SHORT_WALK`` are answered by ``operation_contexts`` instead."""
    ids = np.asarray(ids, dtype=np.int64)
    if debug is None or not len(debug):
        return ids.copy()
    is_call = np.asarray(_op_calls(debug), dtype=bool)
    parents = np.asarray(debug.parent, dtype=np.int64)
    known = (ids >= 0) & (ids < len(parents))
    current = np.where(known, ids, -1)
    owner = current.copy()
    walking = known & ~is_call[np.maximum(current, 0)]
    for _ in range(SHORT_WALK):
        if not walking.any():
            return owner
        up = parents[current[walking]]
        # a parent must precede its child, so a damaged file cannot loop
        good = (up >= 0) & (up < current[walking])
        rows = np.flatnonzero(walking)
        current[rows[~good]] = -1
        current[rows[good]] = up[good]
        found = rows[good][is_call[up[good]]]
        owner[found] = current[found]
        walking = np.zeros_like(walking)
        walking[rows[good]] = ~is_call[up[good]]
    if not walking.any():
        return owner
    return np.where(known, _nearest_calls(is_call, parents)[np.where(known, ids, 0)], -1)


def outermost_op_calls(debug: Any, ids: np.ndarray) -> np.ndarray:
    """The outermost op call at or above each id (a framework op such as an ONNX node, or
    a library op no other op called), else the id itself; -1 and unknown ids give -1.
    Pointer jumping as ``_nearest_calls``: log2(depth) passes over the table."""
    ids = np.asarray(ids, dtype=np.int64)
    if debug is None:
        return np.full(len(ids), -1, dtype=np.int64)
    is_call = np.asarray(_op_calls(debug), dtype=bool)
    parents = np.asarray(debug.parent, dtype=np.int64)
    known = (ids >= 0) & (ids < len(parents))
    outer = outermost_marked(is_call, parents)
    return np.where(known, outer[np.where(known, ids, 0)] if len(outer) else -1, -1)


def outermost_marked(is_call: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """For every context (or program tree node), the outermost marked one (an op call) on its
    chain up (a parent must precede its child, so a damaged file cannot loop), else itself.
    ``target`` is how far each pointer reaches, ``best`` the outermost call from the context
    up to its target, inclusive."""
    here = np.arange(len(parents), dtype=np.int64)
    stops = (parents < 0) | (parents >= here)
    target = np.where(stops, here, parents)
    best = np.where(is_call, here, -1)
    best = np.where(is_call[target], target, best)
    while True:
        further = target[target]
        if np.array_equal(further, target):
            break
        above = best[target]
        best = np.where(above >= 0, above, best)
        target = further
    return np.where(best >= 0, best, here)


def _grouping_owners(debug: Any, group_by: str, ids: np.ndarray) -> np.ndarray:
    if group_by == "name":
        return op_call_owners(debug, ids)
    return outermost_op_calls(debug, ids)


def operation_contexts(debug: Any) -> np.ndarray:
    """For each context, the nearest context at or above it that is a library op call (its
    API is its op), else itself. Parents normally precede children; a parent that does not
    is ignored, so a damaged file cannot send the walk round a cycle."""
    is_call = np.asarray(_op_calls(debug), dtype=bool)
    return _nearest_calls(is_call, np.asarray(debug.parent, dtype=np.int64))


def _nearest_calls(is_call: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """Pointer jumping: each context points at its parent until it reaches an op call or the
    top of its chain, and every pass doubles how far each pointer reaches -- log2(depth)
    passes over the table, so a chain 200,000 deep costs 18 passes, not 200,000 steps."""
    here = np.arange(len(parents), dtype=np.int64)
    stops = is_call | (parents < 0) | (parents >= here)
    target = np.where(stops, here, parents)
    while True:
        further = target[target]
        if np.array_equal(further, target):
            break
        target = further
    return np.where(is_call[target], target, here)


def context_labels(debug: Any, group_by: str) -> Sequence[str]:
    """One label per debug context for ``group_by`` in ``GROUPINGS`` (a lazy column when the
    contexts are)."""
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {', '.join(GROUPINGS)}, not {group_by!r}")
    if debug is None:
        return []
    if group_by in ("op", "layer"):
        return getattr(debug, group_by)
    if group_by == "context":
        return debug.name
    names = getattr(debug, _BY_OWNER[group_by])
    owner = _grouping_owners(debug, group_by, np.arange(len(debug.parent), dtype=np.int64))
    if isinstance(names, StringColumn):
        return StringColumn(names.table, names.ids[owner])
    return [names[i] for i in owner.tolist()]


@dataclass(frozen=True)
class DebugGroups:
    """Groups of debug contexts: ``labels[group_of(ids)]`` is the label of each id.

    Label "" holds everything without a debug context (id -1, or no debug.cbor) and
    contexts whose op or layer is empty.
    """

    #: sorted, unique; a StringColumn (ids into the debug string table) when the contexts
    #: are lazy, so 400,000 labels are decoded only where they are shown
    label_column: Sequence[str]
    _group_of_context: np.ndarray  # int64 (contexts + 1,): the last entry is for id -1

    def __len__(self) -> int:
        return len(self.label_column)

    @cached_property
    def labels(self) -> list[str]:
        """Every label as a str (decoded on first use)."""
        return as_str_list(self.label_column)

    def group_of(self, ids: np.ndarray) -> np.ndarray:
        """The group of each debug context id; -1 (no context) and ids without contexts
        go to the "" group."""
        ids = np.asarray(ids, dtype=np.int64)
        known = len(self._group_of_context) - 1
        ids = np.where((ids >= 0) & (ids < known), ids, -1)
        return self._group_of_context[ids]  # -1 indexes the last entry


def debug_groups(debug: Any, group_by: str) -> DebugGroups:
    labels = context_labels(debug, group_by)
    if isinstance(labels, StringColumn):
        # Group the string ids, then name only the distinct labels: no string per context.
        unique, group = group_string_ids_lazily(labels.table, labels.ids)
        return DebugGroups(unique, np.append(group, 0))  # "" sorts first: id -1's group
    labels = [*labels, ""]
    # A dict, not np.unique: a numpy string array pads every label to the longest one.
    unique = sorted(set(labels))
    index = {label: i for i, label in enumerate(unique)}
    return DebugGroups(unique, np.array([index[label] for label in labels], dtype=np.int64))


def groups_of(debug: Any, group_by: str, ids: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The groups of the contexts ``ids`` alone: (sorted labels, "" among them, and each
    id's index into them), as ``debug_groups(debug, group_by)`` would label them. It costs
    the ids asked about, not every context: the 36,000 program steps of a report with
    400,000 variables are grouped without naming the variables."""
    ids = np.asarray(ids, dtype=np.int64)
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {', '.join(GROUPINGS)}, not {group_by!r}")
    count = 0 if debug is None else len(debug.parent)
    known = (ids >= 0) & (ids < count)
    owners = np.where(known, ids, -1)
    column = _BY_OWNER.get(group_by, "name")
    if group_by in ("op", "layer"):
        column = group_by
    elif group_by in _BY_OWNER and count:
        owners = np.where(known, _grouping_owners(debug, group_by, np.where(known, ids, 0)), -1)
    distinct, inverse = np.unique(owners, return_inverse=True)
    names = debug_column(debug, column, distinct)
    labels = sorted(set(names) | {""})
    index = {label: i for i, label in enumerate(labels)}
    group_of_distinct = np.array([index[name] for name in names], dtype=np.int64)
    return labels, group_of_distinct[inverse.reshape(-1)]
