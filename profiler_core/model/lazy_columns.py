"""Columns of per-item text and JSON that decode only what is asked for.

A report of 400,000 debug contexts stores each text column as one int32 index per context
into a shared string table: opening it is a few array views, and a view that shows ten
contexts decodes ten strings. Grouping (by op, by layer) works on the indices alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.model.strings import StringInterner, Strings


def as_str_list(column: Sequence[str]) -> list[str]:
    """Every string of ``column`` as a list; a ``StringColumn`` decodes only its own strings,
    not its whole table."""
    if isinstance(column, StringColumn):
        return column.table.decode(column.ids)
    return list(column)


class StringColumn(Sequence[str]):
    """``column[i]`` is ``table[ids[i]]`` ("" where the id is -1); behaves as a read-only
    list of str."""

    def __init__(self, table: Strings, ids: np.ndarray) -> None:
        self.table = table
        self.ids = np.asarray(ids, dtype=np.int32)

    @classmethod
    def from_list(cls, items: Sequence[str]) -> StringColumn:
        interner = StringInterner()
        ids = interner.many(items)
        return cls(interner.table(), ids)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return self.take(self.ids[index])
        string_id = int(self.ids[index])
        return self.table[string_id] if string_id >= 0 else ""

    def take(self, ids: np.ndarray) -> list[str]:
        """The strings of table ids ``ids`` (not row numbers)."""
        return self.table.take(ids)

    def rows(self, rows: np.ndarray) -> list[str]:
        """The strings of rows ``rows``."""
        return self.table.take(self.ids[np.asarray(rows, dtype=np.int64)])

    def tolist(self) -> list[str]:
        return self.table.take(self.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, StringColumn)):
            return len(other) == len(self) and list(other) == self.tolist()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like a list

    def __repr__(self) -> str:
        return f"StringColumn({len(self)} rows, {len(self.table)} distinct)"


class JsonColumn(Sequence[dict[str, Any]]):
    """Per-row JSON maps stored as text in a string table (id -1 is ``{}``); each access
    parses a fresh dict, so a caller changing it changes nothing else. Text that does not
    parse raises ``ReportError`` naming ``path`` when it is read."""

    def __init__(self, table: Strings, ids: np.ndarray, path: Path | None = None) -> None:
        self.table = table
        self.ids = np.asarray(ids, dtype=np.int32)
        self.path = path  # the file the texts came from, named by errors

    @classmethod
    def from_list(cls, items: Sequence[dict[str, Any]]) -> JsonColumn:
        interner = StringInterner()
        ids = np.fromiter(
            (interner(json.dumps(item, separators=(",", ":"))) if item else -1 for item in items),
            dtype=np.int32,
            count=len(items),
        )
        return cls(interner.table(), ids)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._parse(int(i)) for i in self.ids[index].tolist()]
        return self._parse(int(self.ids[index]))

    def _parse(self, string_id: int) -> dict[str, Any]:
        if string_id < 0:
            return {}
        text = self.table[string_id]
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            problem = f"arguments text {string_id} is not JSON ({str(error)[:80]})"
            raise ReportError(self.path, problem) from None
        if not isinstance(value, dict):
            raise ReportError(self.path, f"arguments text {string_id} is not a JSON map")
        return value

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for string_id in self.ids.tolist():
            yield self._parse(string_id)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, JsonColumn)):
            return len(other) == len(self) and list(other) == list(self)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JsonColumn({len(self)} rows, {len(self.table)} distinct)"
