"""Version 1 of ``debug.cbor``: every column a CBOR list (one item per context).

Layout: ``{"magic": "popvision-py debug", "formatMajor": 1, "formatMinor": 0, "reportId": str,
"contexts": {"name": [str], "parent": [int], "layer": [str], "op": [str], "api": [str],
"file": [str], "line": [int], "args": [{str: JSON-like}]}}``, all lists of one length.
Files of this version are still read (into the same lazy columns as version 2), and the
checks here also guard what the writer is given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.model.lazy_columns import JsonColumn, StringColumn
from profiler_core.model.profile import DebugData

TEXT_COLUMNS = ("name", "layer", "op", "api", "file")
INT_COLUMNS = ("parent", "line")
COLUMNS = ("name", "parent", "layer", "op", "api", "file", "line", "args")
MAX_NESTING = 32
"""Deepest nesting of a context's arguments (the layout itself needs 4 levels)."""
_I32 = np.iinfo(np.int32)


def contexts_of(debug: DebugData) -> dict[str, list[Any]]:
    """The version 1 columns of ``debug`` as plain lists."""
    return {
        "name": list(debug.name),
        "parent": np.asarray(debug.parent).tolist(),
        "layer": list(debug.layer),
        "op": list(debug.op),
        "api": list(debug.api),
        "file": list(debug.file),
        "line": np.asarray(debug.line).tolist(),
        "args": list(debug.args),
    }


def debug_from_contexts(report_id: str, contexts: Any, path: Any = None) -> DebugData:
    """Checked version 1 ``contexts`` as ``DebugData`` with lazy columns."""
    if not isinstance(contexts, dict):
        raise DocumentError(f"contexts must be a map, not {type_name(contexts)}")
    check_contexts(contexts)
    args = JsonColumn.from_list(contexts["args"])
    return DebugData(
        report_id=report_id,
        name=StringColumn.from_list(contexts["name"]),
        parent=np.array(contexts["parent"], dtype=np.int32),
        layer=StringColumn.from_list(contexts["layer"]),
        op=StringColumn.from_list(contexts["op"]),
        api=StringColumn.from_list(contexts["api"]),
        file=StringColumn.from_list(contexts["file"]),
        line=np.array(contexts["line"], dtype=np.int32),
        args=JsonColumn(args.table, args.ids, path),
    )


class DocumentError(Exception):
    """What is wrong with a decoded document; becomes a ReportError with the path."""


def check_contexts(contexts: dict[str, Any]) -> None:
    missing = [name for name in COLUMNS if name not in contexts]
    if missing:
        raise DocumentError(f"contexts lack the column(s) {', '.join(missing)}")
    for name in COLUMNS:
        if not isinstance(contexts[name], list):
            raise DocumentError(f"contexts.{name} must be a list, not {type_name(contexts[name])}")
    count = len(contexts["name"])
    for name in COLUMNS:
        if len(contexts[name]) != count:
            raise DocumentError(
                f"contexts.{name} has {len(contexts[name])} entries but contexts.name has "
                f"{count}: every column needs one entry per context"
            )
    for name in TEXT_COLUMNS:
        _check_all(contexts[name], name, lambda v: isinstance(v, str), "a string")
    for name in INT_COLUMNS:
        _check_all(contexts[name], name, _is_int32, "a 32-bit integer")
    _check_all(
        contexts["parent"], "parent", lambda v: -1 <= v < count, f"-1 or a context below {count}"
    )
    for index, args in enumerate(contexts["args"]):
        if not isinstance(args, dict):
            raise DocumentError(f"contexts.args[{index}] must be a map, not {type_name(args)}")
        problem = _json_problem(args, MAX_NESTING)
        if problem:
            raise DocumentError(f"contexts.args[{index}]: {problem}")


def _check_all(values: list[Any], name: str, ok: Any, wanted: str) -> None:
    if all(ok(value) for value in values):
        return
    index = next(i for i, value in enumerate(values) if not ok(value))
    raise DocumentError(f"contexts.{name}[{index}] is {values[index]!r:.60}, not {wanted}")


def _json_problem(value: Any, depth: int) -> str | None:
    """Why ``value`` is not JSON-like (None, bool, int, float, str, lists, str-keyed maps)."""
    if depth <= 0:
        return "nested too deeply"
    if value is None or isinstance(value, (bool, float, str)):
        return None
    if isinstance(value, int):
        # Wider integers would need CBOR's bignum tag, which readers refuse.
        return None if -(2**64) <= value < 2**64 else f"integer {value:.3g} is too large"
    if isinstance(value, list):
        return next(filter(None, (_json_problem(item, depth - 1) for item in value)), None)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"map key {key!r:.40} is not a string"
            problem = _json_problem(item, depth - 1)
            if problem:
                return problem
        return None
    return f"{type_name(value)} is not a JSON-like value"


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_int32(value: Any) -> bool:
    return is_int(value) and _I32.min <= value <= _I32.max


def type_name(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__
