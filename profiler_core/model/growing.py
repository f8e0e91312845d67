"""Rows appended to arrays with room to spare, handed out as views of the rows so far: a
live recording's metric samples, lightweight profiling's runs and executions -- where
appending n rows costs n (amortised), not the rows so far. A view handed out earlier keeps
its rows: later ones are written past it, or into a new buffer."""

from __future__ import annotations

from typing import Any

import numpy as np


class GrowingRows:
    """An append-only array of rows of ``shape`` (() for scalars), doubling its room."""

    def __init__(self, dtype: type | np.dtype, shape: tuple[int, ...] = ()) -> None:
        self._data = np.empty((16, *shape), dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, rows: np.ndarray) -> None:
        self.grow(len(rows))[:] = rows

    def grow(self, count: int, expect: int = 0) -> np.ndarray:
        """``count`` new rows at the end, to be filled in; when the array must grow, to at
        least the ``expect`` rows foreseen in all (room never written is never touched)."""
        old, need = self._n, self._n + count
        if need > len(self._data):
            rows = max(need, 2 * len(self._data), expect)
            grown = np.empty((rows, *self._data.shape[1:]), self._data.dtype)
            grown[:old] = self._data[:old]
            self._data = grown
        self._n = need
        return self._data[old:need]

    def view(self) -> np.ndarray:
        """The rows so far (a view: no copy)."""
        return self._data[: self._n]


class GrowingColumns:
    """Named columns of one length, each a ``GrowingRows``; their views are read-only (a
    report's columns: nobody changes them)."""

    def __init__(self, **dtypes: type) -> None:
        self._columns = {name: GrowingRows(dtype) for name, dtype in dtypes.items()}

    def __len__(self) -> int:
        return len(next(iter(self._columns.values())))

    def append(self, **values: Any) -> None:
        count = len(next(iter(values.values())))
        for name, rows in self.grow(count).items():
            rows[:] = values[name]

    def grow(self, count: int, expect: int = 0) -> dict[str, np.ndarray]:
        """``count`` new rows at the end of every column, to be filled in."""
        return {name: column.grow(count, expect) for name, column in self._columns.items()}

    def view(self, name: str) -> np.ndarray:
        view = self._columns[name].view()
        view.flags.writeable = False
        return view
