"""A column of strings made row by row when read: an analysis answering for 20,000 variables
hands a table a sequence whose cells are built only for the rows a person looks at."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from profiler_core.model.lazy_columns import StringColumn


class LazyRows(Sequence[str]):
    """``rows[i]`` is ``make(i)``, computed when asked; compares equal to a list of the same
    strings, so callers treat it as the list it stands for."""

    def __init__(
        self,
        size: int,
        make: Callable[[int], str],
        many: Callable[[int, int], list[str]] | None = None,
    ) -> None:
        self._size = int(size)
        self._make = make
        self._many = many  # rows [start, stop) at once: what a CLI table of them all reads

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._size)
            if self._many is not None and step == 1:
                return self._many(start, max(start, stop))
            return [self._make(i) for i in range(start, stop, step)]
        i = int(index)
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(f"row {index} of {self._size}")
        return self._make(i)

    def __iter__(self) -> Iterator[str]:
        return (self._make(i) for i in range(self._size))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self._size and all(
                a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    def __repr__(self) -> str:
        return f"LazyRows({list(self[:3])}{', ...' if self._size > 3 else ''}; {self._size} rows)"

    __hash__ = None  # type: ignore[assignment]


def debug_rows(debug: Any, column: str, ids: Sequence[int]) -> Sequence[str]:
    """``debug.<column>`` of each debug context id, as ``debug_column`` gives, made per row
    (a lazy string column over the contexts' string table when the contexts have one)."""
    values = None if debug is None else getattr(debug, column)
    if isinstance(values, StringColumn):
        ids = np.asarray(ids, dtype=np.int64)
        inside = (ids >= 0) & (ids < len(values))
        return StringColumn(
            values.table, np.where(inside, values.ids[np.where(inside, ids, 0)], -1)
        )
    ids = [int(i) for i in ids] if not hasattr(ids, "tolist") else ids.tolist()  # type: ignore[attr-defined]
    if values is None:
        return LazyRows(len(ids), lambda i: "")
    known = len(values)
    return LazyRows(len(ids), lambda i: values[ids[i]] if 0 <= ids[i] < known else "")
