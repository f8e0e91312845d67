"""A read-only list whose items are made when indexed: ``report.compilation.tiles`` of a
23,552-tile report is one of these, and a script that touches one tile makes one object."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar, overload

T = TypeVar("T")

PRINT_LENGTH = [10]
"""How many items ``repr`` of a list shows (libpva's ``report.listPrintLength(n)``)."""


class LazyList(Sequence[T], Generic[T]):
    """``len`` items; item ``i`` is ``make(i)``, made again on every access (it is a view)."""

    __slots__ = ("_len", "_make")

    def __init__(self, length: int, make: Callable[[int], T]) -> None:
        self._len = int(length)
        self._make = make

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._make(i) for i in range(self._len)[index]]
        if not -self._len <= index < self._len:
            raise IndexError(f"index {index} of a list of {self._len}")
        return self._make(index % self._len)

    def __iter__(self) -> Iterator[T]:
        return (self._make(i) for i in range(self._len))

    def __repr__(self) -> str:
        shown = min(self._len, max(PRINT_LENGTH[0], 0))
        items = ", ".join(repr(self._make(i)) for i in range(shown))
        more = f", ... ({self._len - shown} more)" if shown < self._len else ""
        return f"[{items}{more}]"
