"""Tables of the CLI and their three renderings: aligned text for people, CSV and JSON for
scripts. A table is named columns of equal length (numpy arrays or lists)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Table:
    """``columns[name]`` is one column; every column has ``len(table)`` values."""

    name: str  # the JSON key and text heading, e.g. "memory per tile"
    columns: dict[str, Sequence[Any]]
    notes: list[str] = field(default_factory=list)  # text-only lines under the table

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def rows(self) -> list[list[Any]]:
        columns = [_plain_list(values) for values in self.columns.values()]
        return [list(row) for row in zip(*columns, strict=True)]

    def records(self) -> list[dict[str, Any]]:
        names = list(self.columns)
        return [dict(zip(names, row, strict=True)) for row in self.rows()]


def _plain_list(values: Sequence[Any]) -> list[Any]:
    if isinstance(values, np.ndarray):
        return values.tolist()
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def render_text(tables: list[Table], header: list[tuple[str, str]] | None = None) -> str:
    """``header`` key/value lines, then each table with right-aligned numbers."""
    parts = []
    if header:
        width = max(len(key) for key, _ in header) + 1
        parts.append("\n".join(f"{key + ':':<{width}} {value}" for key, value in header))
    for table in tables:
        parts.append(_text_table(table))
    return "\n\n".join(parts) + "\n" if parts else ""


def _text_table(table: Table) -> str:
    names = list(table.columns)
    numeric = [_is_numeric_column(values) for values in table.columns.values()]
    text = [_column_cells(values) for values in table.columns.values()]
    widths = [
        max([len(n)] + [len(c) for c in column]) for n, column in zip(names, text, strict=True)
    ]
    cells = [list(row) for row in zip(*text, strict=True)]

    def line(values: list[str]) -> str:
        padded = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(padded).rstrip()

    lines = [f"{table.name} ({len(table)} rows)" if len(table) != 1 else table.name]
    lines += [line(names), line(["-" * w for w in widths])]
    lines += [line(r) for r in cells]
    lines += table.notes
    return "\n".join(lines)


def _is_numeric_column(values: Sequence[Any]) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "iuf"
    return all(_is_number(v) for v in values)


def _column_cells(values: Sequence[Any]) -> list[str]:
    """Each value as text; a numpy column is formatted by its dtype, not value by value."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return [f"{v:,}" for v in values.tolist()]
    return [_cell(v) for v in _plain_list(values)]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}" if math.isfinite(value) else str(value)
    return "" if value is None else str(value)


def render_csv(table: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(table.columns))
    writer.writerows(table.rows())
    return out.getvalue()


def render_json(document: dict[str, Any]) -> str:
    """``document`` with each Table as a list of row records."""

    def plain(value: Any) -> Any:
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

    return json.dumps(plain(document), indent=2, allow_nan=False, default=str) + "\n"
