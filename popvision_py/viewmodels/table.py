"""Tables over numpy columns, sorted and filtered by index arrays (no object per row).

A ``ColumnTable`` is what a Qt table model shows: ``rows`` maps each shown row to a source
row, so sorting 300,000 variables is one ``argsort`` and a search is one mask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from popvision_py.viewmodels.format import format_bytes


@dataclass(frozen=True)
class Column:
    header: str
    values: np.ndarray | Sequence[str]
    help: str = ""
    kind: str = "text"  # "text", "count", "bytes" (readable), "exact_bytes", "flag", "percent"
    colors: Sequence[str] | None = None  # a swatch per row (category colours)
    units: str = "KiB"  # of a "bytes" column: format.BYTE_UNITS

    def display(self, row: int) -> str:
        value = self.values[row]
        if self.kind == "bytes":
            return format_bytes(int(value), units=self.units)
        if self.kind in ("count", "exact_bytes"):
            return f"{int(value):,}"
        if self.kind == "percent":
            return f"{float(value):.2f}%"
        if self.kind == "delta":
            return f"{int(value):+,}" if int(value) else "0"
        if self.kind == "delta_bytes":
            text = format_bytes(int(value), units=self.units)
            return text if int(value) <= 0 else f"+{text}"
        if self.kind == "delta_percent":
            return _signed_percent(float(value))
        if self.kind == "flag":
            return "yes" if value else "no"
        if self.kind == "percent":
            return f"{float(value):.1f}%"
        return str(value)

    @property
    def numeric(self) -> bool:
        return self.kind != "text"


class ColumnTable:
    """Columns of equal length, with the shown rows (after search and sort) as an index array."""

    def __init__(
        self,
        columns: list[Column],
        matcher: Callable[[str], np.ndarray] | None = None,
        tints: Sequence[str | None] | None = None,
    ) -> None:
        self.columns = columns
        self.tints = tints  # a background colour per source row (None: untinted), or None
        self._matcher = matcher
        self.size = len(columns[0].values) if columns else 0
        self.rows = np.arange(self.size, dtype=np.int64)
        self.search_text = ""
        self.sort_column: int | None = None
        self.sort_descending = False

    def __len__(self) -> int:
        return int(self.rows.size)

    def display(self, row: int, column: int) -> str:
        return self.columns[column].display(int(self.rows[row]))

    def tint(self, row: int) -> str | None:
        """The background colour of shown ``row`` (compare tables tint changed rows)."""
        return None if self.tints is None else self.tints[int(self.rows[row])]

    def raw(self, row: int, column: int) -> object:
        return self.columns[column].values[int(self.rows[row])]

    def search(self, text: str) -> None:
        """Keep the rows matching ``text`` (all rows for empty text)."""
        self.search_text = text
        self._apply()

    def sort(self, column: int, descending: bool = False) -> None:
        self.sort_column, self.sort_descending = column, descending
        self._apply()

    def _apply(self) -> None:
        if not self.search_text:
            rows = np.arange(self.size, dtype=np.int64)
        elif self._matcher is not None:
            rows = np.asarray(self._matcher(self.search_text), dtype=np.int64)
        else:
            rows = self._default_matches(self.search_text)
        if self.sort_column is not None and rows.size:
            key = self._sort_key(self.columns[self.sort_column])[rows]
            if self.sort_descending:  # ties stay in source order, so negate rather than reverse
                key = _descending_key(key)
            rows = rows[np.argsort(key, kind="stable")]
        self.rows = rows

    def _sort_key(self, column: Column) -> np.ndarray:
        if column.numeric:
            return np.asarray(column.values)
        return np.asarray([str(v).lower() for v in column.values])

    def _default_matches(self, text: str) -> np.ndarray:
        needle = text.lower()
        hit = np.zeros(self.size, dtype=bool)
        for column in self.columns:
            if not column.numeric:
                hit |= np.fromiter((needle in str(v).lower() for v in column.values), bool)
        return np.flatnonzero(hit)


def stack_tables(tables: list[ColumnTable], names: list[str]) -> ColumnTable:
    """The rows of ``tables`` (same columns: one view's table of several reports) one after
    the other, a first "Report" column naming the report of each row."""
    first = tables[0]
    owners = [name for table, name in zip(tables, names, strict=True) for _ in range(table.size)]
    columns = [Column("Report", owners, "The report the row is of (A or B).")]
    for index, column in enumerate(first.columns):
        parts = [table.columns[index] for table in tables]
        if column.numeric:
            values: np.ndarray | list = np.concatenate([np.asarray(p.values) for p in parts])
        else:
            values = [value for part in parts for value in part.values]
        colors = None
        if column.colors is not None:
            colors = [color for part in parts for color in (part.colors or [])]
        columns.append(replace(column, values=values, colors=colors))
    return ColumnTable(columns)


def _signed_percent(value: float) -> str:
    """``+12.50%``, ``-3.0%``; ``new`` where A was 0 (an infinite change)."""
    if np.isnan(value):
        return "—"
    if np.isinf(value):
        return "new" if value > 0 else "gone"
    if value == 0:
        return "0%"
    return f"{value:+.2f}%" if abs(value) < 10 else f"{value:+,.1f}%"


def _descending_key(key: np.ndarray) -> np.ndarray:
    if key.dtype.kind in "biuf":
        return -key.astype(np.float64)
    # Strings: rank them, then negate the ranks.
    _, ranks = np.unique(key, return_inverse=True)
    return -ranks
