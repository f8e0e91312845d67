"""Named numpy columns that grow as rows are appended (lightweight profiling's runs and
executions, ``blocks.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np


class GrowingColumns:
    """Named columns that grow by doubling: appending copies only the new rows, and a view
    of the first n rows stays valid (later rows go past it, or into a new buffer)."""

    def __init__(self, **dtypes: type) -> None:
        self._columns = {name: np.zeros(16, dtype) for name, dtype in dtypes.items()}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, **values: Any) -> None:
        count = len(next(iter(values.values())))
        for name, rows in self.grow(count).items():
            rows[:] = values[name]

    def grow(self, count: int, expect: int = 0) -> dict[str, np.ndarray]:
        """``count`` new rows at the end, to be filled in: each column's slice of them;
        when the columns must grow, to at least the ``expect`` rows foreseen in all."""
        old, size = self._size, self._size + count
        for name, column in self._columns.items():
            if size > len(column):
                grown = np.empty(max(size, 2 * len(column), expect), column.dtype)
                grown[:old] = column[:old]
                self._columns[name] = grown
        self._size = size
        return {name: column[old:size] for name, column in self._columns.items()}

    def view(self, name: str) -> np.ndarray:
        view = self._columns[name][: self._size]
        view.flags.writeable = False  # a report's columns: nobody changes them
        return view
