"""Rows appended to an array with room to spare, handed out as views of the rows so far: a
live recording's metric samples, where appending n rows costs n (amortised), not the
series so far. A view handed out earlier keeps its rows: later ones are written past it."""

from __future__ import annotations

import numpy as np


class GrowingRows:
    """An append-only array of rows of ``shape`` (() for scalars), doubling its room."""

    def __init__(self, dtype: type | np.dtype, shape: tuple[int, ...] = ()) -> None:
        self._data = np.zeros((16, *shape), dtype)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, rows: np.ndarray) -> None:
        rows = np.asarray(rows, self._data.dtype)
        need = self._n + len(rows)
        if need > len(self._data):
            grown = np.zeros(
                (max(need, 2 * len(self._data)), *self._data.shape[1:]), self._data.dtype
            )
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n : need] = rows
        self._n = need

    def view(self) -> np.ndarray:
        """The rows so far (a view: no copy)."""
        return self._data[: self._n]
