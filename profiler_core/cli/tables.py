"""Tables of the CLI and their three renderings: aligned text for people, CSV and JSON for
scripts. A table is named columns of equal length (numpy arrays or lists)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.unique import sorted_unique


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


class TextColumn(Sequence[str]):
    """A text column shown with ``empty`` in place of "", decoded a slice at a time: a
    StringColumn of 400,000 labels is never a list of 400,000 str."""

    def __init__(self, column: Sequence[str], empty: str) -> None:
        self.column = column
        self.empty = empty

    def __len__(self) -> int:
        return len(self.column)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [text or self.empty for text in self.column[index]]
        return self.column[index] or self.empty

    def __iter__(self) -> Iterator[str]:
        for lo in range(0, len(self), TEXT_CHUNK_ROWS):
            yield from self[lo : lo + TEXT_CHUNK_ROWS]

    def widest(self) -> int | None:
        """The longest cell's length when the column can tell it without decoding (its
        ``text_lengths(start, stop)``, e.g. matched keys of ASCII string tables), else
        None. Asked a chunk of rows at a time: no array of every row's length."""
        text_lengths = getattr(self.column, "text_lengths", None)
        if text_lengths is None:
            return None
        longest = 0
        for lo in range(0, len(self), TEXT_CHUNK_ROWS * 8):
            lengths = text_lengths(lo, lo + TEXT_CHUNK_ROWS * 8)
            if lengths is None:
                return None
            if len(lengths):
                longest = max(longest, int(lengths.max()))
                if bool((lengths == 0).any()):
                    longest = max(longest, len(self.empty))
        return longest


def _plain_list(values: Sequence[Any]) -> list[Any]:
    if isinstance(values, np.ndarray):
        return values.tolist()
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def render_text(tables: list[Table], header: list[tuple[str, str]] | None = None) -> str:
    """``header`` key/value lines, then each table with right-aligned numbers."""
    return "".join(iter_text(tables, header))


def iter_text(tables: list[Table], header: list[tuple[str, str]] | None = None) -> Iterator[str]:
    """``render_text`` in pieces of at most a chunk of rows, to write as they are made."""
    first = True
    if header:
        width = max(len(key) for key, _ in header) + 1
        yield "\n".join(f"{key + ':':<{width}} {value}" for key, value in header)
        first = False
    for table in tables:
        if not first:
            yield "\n\n"
        first = False
        yield from _text_table(table)
    if not first:
        yield "\n"


#: Rows formatted at a time: a 400k-row table never holds all its cells as strings at once.
TEXT_CHUNK_ROWS = 1 << 12


def _text_table(table: Table) -> Iterator[str]:
    names = list(table.columns)
    columns = list(table.columns.values())
    numeric = [_is_numeric_column(values) for values in columns]
    n = len(table)
    widths = [
        max(len(name), _text_width(values, n)) for name, values in zip(names, columns, strict=True)
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    title = f"{table.name} ({n} rows)" if n != 1 else table.name
    yield "\n".join([title, line(names), line(["-" * w for w in widths])])
    for lo in range(0, n, TEXT_CHUNK_ROWS):
        # Padded a column at a time with C-level map() calls, then each row joined once.
        padded = [
            _padded_cells(values[lo : lo + TEXT_CHUNK_ROWS], w, num)
            for values, w, num in zip(columns, widths, numeric, strict=True)
        ]
        rows = map("  ".join, zip(*padded, strict=True))
        # Only a text column pads the line's end; numbers end flush with their column.
        yield "\n" + "\n".join(rows if numeric[-1] else map(str.rstrip, rows))
    if table.notes:
        yield "\n" + "\n".join(table.notes)


def _text_width(values: Sequence[Any], n: int) -> int:
    """The widest cell of a column: from its extremes for integers (the longest number
    is the largest or the most negative), else by formatting it a chunk at a time."""
    if n == 0:
        return 0
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return max(len(f"{int(values.min()):,}"), len(f"{int(values.max()):,}"))
    if isinstance(values, TextColumn) and (widest := values.widest()) is not None:
        return widest
    return max(
        max(map(len, _column_cells(values[lo : lo + TEXT_CHUNK_ROWS])))
        for lo in range(0, n, TEXT_CHUNK_ROWS)
    )


def _padded_cells(values: Sequence[Any], width: int, numeric: bool) -> list[str]:
    """Each value as text padded to ``width`` (right-aligned when ``numeric``). An integer
    column with few distinct values (counts, zeros) formats each distinct value once."""
    pad = str.rjust if numeric else str.ljust
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu" and len(values):
        distinct = sorted_unique(values)
        if len(distinct) * 4 <= len(values):
            texts = [pad(f"{v:,}", width) for v in distinct.tolist()]
            return list(map(texts.__getitem__, np.searchsorted(distinct, values).tolist()))
        # formatted and padded by one format spec per value: one pass, not two
        spec = f"{'>' if numeric else '<'}{width},"
        return list(map(format, values.tolist(), repeat(spec)))
    if isinstance(values, np.ndarray) and values.dtype.kind == "b":
        return list(map((pad("no", width), pad("yes", width)).__getitem__, values.tolist()))
    return list(map(pad, _column_cells(values), repeat(width)))


def _is_numeric_column(values: Sequence[Any]) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "iuf"
    if isinstance(values, StringColumn | TextColumn):  # text: iterating would decode it all
        return not len(values)
    return all(_is_number(v) for v in values)


def _column_cells(values: Sequence[Any]) -> list[str]:
    """Each value as text; a numpy column is formatted by its dtype, not value by value."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return list(map(format, values.tolist(), repeat(",")))
    if isinstance(values, np.ndarray) and values.dtype.kind == "b":
        return list(map(("no", "yes").__getitem__, values.tolist()))
    if isinstance(values, list) and set(map(type, values)) <= {str}:
        return values  # names and labels are their own text
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
    return "".join(iter_csv(table))


def iter_csv(table: Table, header: bool = True) -> Iterator[str]:
    """The table as CSV (its column names first when ``header``), a chunk of rows at a time."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(list(table.columns))
    columns = list(table.columns.values())
    for lo in range(0, len(table), TEXT_CHUNK_ROWS):
        cells = [_plain_list(values[lo : lo + TEXT_CHUNK_ROWS]) for values in columns]
        writer.writerows(zip(*cells, strict=True))
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    if out.tell():
        yield out.getvalue()
