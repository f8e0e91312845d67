"""``--json`` written as it is made: the document's frame by ``json.dumps``, each table's
rows formatted a chunk at a time, a column at a time, byte-identical to
``json.dumps(document, indent=2)`` with every table as a list of row records."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator, Sequence
from itertools import repeat
from json.encoder import encode_basestring_ascii
from typing import Any

import numpy as np

from profiler_core.cli.tables import Table
from profiler_core.model.lazy_columns import StringColumn

#: Records formatted at a time: a 400k-row table never holds all its cells as text at once.
JSON_CHUNK_ROWS = 1 << 12

_INDENT = "  "


def plain(value: Any) -> Any:
    """``value`` as what ``json.dumps`` takes: numpy values as Python ones, non-finite floats
    as None, tables as lists of row records."""
    if isinstance(value, Table):
        return value.records()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _dumps(value: Any) -> str:
    return json.dumps(plain(value), indent=2, allow_nan=False, default=str)


def iter_json(document: dict[str, Any]) -> Iterator[str]:
    """``document`` as indented JSON in pieces of at most a chunk of records."""
    tables: list[Table] = []
    token = uuid.uuid4().hex

    def mark(value: Any) -> Any:
        # Each table becomes a unique string in the frame, found again by its quoted form.
        if isinstance(value, Table):
            tables.append(value)
            return f"popvision-table-{token}-{len(tables) - 1}"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [mark(v) for v in value]
        return value

    frame = _dumps(mark(document)) + "\n"
    start = 0
    for i, table in enumerate(tables):
        marker = f'"popvision-table-{token}-{i}"'
        at = frame.index(marker, start)
        line_start = frame.rfind("\n", 0, at) + 1
        indent = frame[line_start:at]
        indent = indent[: len(indent) - len(indent.lstrip(" "))]
        yield frame[start:at]
        yield from _json_records(table, indent)
        start = at + len(marker)
    yield frame[start:]


def _json_records(table: Table, indent: str) -> Iterator[str]:
    """The table as a JSON list of records whose closing bracket is at ``indent``."""
    n = len(table)
    if n == 0:
        yield "[]"
        return
    item = indent + _INDENT
    field = item + _INDENT
    names = list(table.columns)
    # One %-template per record: its keys are fixed, its values are each column's cells.
    template = (
        "\n"
        + item
        + "{"
        + ",".join(
            "\n" + field + encode_basestring_ascii(str(name)).replace("%", "%%") + ": %s"
            for name in names
        )
        + "\n"
        + item
        + "}"
    )
    columns = list(table.columns.values())
    yield "["
    for lo in range(0, n, JSON_CHUNK_ROWS):
        cells = [_json_cells(values[lo : lo + JSON_CHUNK_ROWS], field) for values in columns]
        records = map(template.__mod__, zip(*cells, strict=True))
        yield ("," if lo else "") + ",".join(records)
    yield "\n" + indent + "]"


def _json_cells(values: Sequence[Any], indent: str) -> list[str]:
    """Each value as ``json.dumps`` writes it in a record whose fields are at ``indent``;
    a numpy column is formatted by its dtype, a text column by the C string encoder."""
    if isinstance(values, np.ndarray):
        kind = values.dtype.kind
        if kind in "iu":
            return list(map(int.__repr__, values.tolist()))
        if kind == "b":
            return list(map(("false", "true").__getitem__, values.tolist()))
        if kind == "f" and bool(np.isfinite(values).all()):
            return list(map(float.__repr__, values.astype(np.float64).tolist()))
        values = values.tolist()
    if isinstance(values, StringColumn):
        values = values.tolist()
    if isinstance(values, list) and set(map(type, values)) <= {str}:
        return list(map(encode_basestring_ascii, values))
    return list(map(_json_cell, values, repeat(indent)))


def _json_cell(value: Any, indent: str) -> str:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if math.isfinite(value) else "null"
    # Anything else (a list, a dict, an object shown by str()) as json.dumps nests it.
    return _dumps(value).replace("\n", "\n" + indent)


def render_json(document: dict[str, Any]) -> str:
    """``document`` with each Table as a list of row records, whole."""
    return "".join(iter_json(document))
