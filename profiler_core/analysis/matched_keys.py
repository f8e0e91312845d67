"""The keys of matched rows (``Matched.keys``) as a lazy column: each row's name in A (else
in B), numbered when it repeats, decoded from its string table only when read, a chunk at
a time; and their text widths found from byte lengths, without decoding."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings

#: Keys decoded at a time when a lazy key column is iterated or searched.
KEY_CHUNK_ROWS = 1 << 13


class MatchedKeys(Sequence[str]):
    """The key of each matched row, decoded when read: the name of its row in A (else in B),
    with `` #n`` after the n-th of a repeated name (n >= 2). ``keys[rows]`` with an int
    array gives a list."""

    def __init__(
        self,
        names: tuple[Sequence[str], Sequence[str]],
        rows: tuple[np.ndarray, np.ndarray],
        occurrences: tuple[np.ndarray | None, np.ndarray | None],
    ) -> None:
        self.names = names  # A's and B's names (StringColumns or lists)
        self.rows = rows  # each matched row's row in A and in B (-1: not there)
        self.occurrences = occurrences  # 0 for the first of a name, 1 for the second, ...
        self._ascii_ids: bool | None = None  # both sides string-table ids of ASCII tables

    def __len__(self) -> int:
        return len(self.rows[0])

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice | np.ndarray | list[int]) -> list[str]: ...
    def __getitem__(self, index: Any) -> str | list[str]:
        if isinstance(index, slice):
            return self.take(np.arange(*index.indices(len(self))))
        if isinstance(index, np.ndarray | list):
            return self.take(np.asarray(index, dtype=np.int64))
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"key {index} of {n}")
        return self.take(np.array([index % n]))[0]

    def take(self, matched_rows: np.ndarray) -> list[str]:
        """The keys of ``matched_rows`` (an int array), in that order."""
        matched_rows = np.asarray(matched_rows, dtype=np.int64).reshape(-1)
        rows_a = self.rows[0][matched_rows]
        from_a = rows_a >= 0
        at_a = np.flatnonzero(from_a)
        texts = self._side_texts(0, rows_a[at_a])
        if len(at_a) == len(matched_rows):  # a chunk of A's rows (the first ones)
            return texts
        at_b = np.flatnonzero(~from_a)
        texts += self._side_texts(1, self.rows[1][matched_rows[at_b]])
        if not len(at_a):  # a chunk of rows found in B only (the last ones)
            return texts
        position = np.empty(len(matched_rows), dtype=np.int64)  # each row's text in texts
        position[at_a] = np.arange(len(at_a))
        position[at_b] = np.arange(len(at_a), len(matched_rows))
        return list(map(texts.__getitem__, position.tolist()))

    def _side_texts(self, side: int, rows: np.ndarray) -> list[str]:
        """The keys of ``rows`` of one side: its names, numbered when they repeat."""
        names = self.names[side]
        if isinstance(names, StringColumn):
            texts = names.rows(rows)
        else:
            texts = list(map(names.__getitem__, rows.tolist()))
        occurrences = self.occurrences[side]
        if occurrences is not None:
            numbers = occurrences[rows]
            for i in np.flatnonzero(numbers).tolist():  # only repeats get a number
                texts[i] = f"{texts[i]} #{int(numbers[i]) + 1}"
        return texts

    def text_lengths(self, start: int = 0, stop: int | None = None) -> np.ndarray | None:
        """The length as a str (its characters) of the key of each matched row from
        ``start`` to ``stop``, found without decoding it: from the byte lengths of
        string-table ids whose table is ASCII, and the digits of its number. None when a
        side's names are not such ids (then the keys must be decoded)."""
        if self._ascii_ids is None:  # looked at once, not for every chunk asked
            self._ascii_ids = all(
                isinstance(n, StringColumn) and _is_ascii(n.table) for n in self.names
            )
        if not self._ascii_ids:
            return None
        rows_a = self.rows[0][start:stop]
        from_a = rows_a >= 0
        out = np.zeros(len(rows_a), dtype=np.int64)
        for side, (names, rows) in enumerate(zip(self.names, self.rows, strict=True)):
            at = np.flatnonzero(from_a if side == 0 else ~from_a)
            side_rows = rows[start:stop][at]
            ids = names.ids[side_rows].astype(np.int64)  # type: ignore[attr-defined]
            offsets = names.table.offsets  # type: ignore[attr-defined]
            known = ids >= 0
            ids[~known] = 0
            ends = offsets[np.minimum(ids + 1, len(offsets) - 1)]  # -1s of an empty table
            lengths = np.where(known, ends - offsets[ids], 0)
            occurrences = self.occurrences[side]
            if occurrences is not None:  # " #n" after the n-th of a name, n >= 2
                number = occurrences[side_rows] + 1
                lengths += np.where(number > 1, 2 + _digits(number), 0)
            out[at] = lengths
        return out

    def __iter__(self) -> Iterator[str]:
        for lo in range(0, len(self), KEY_CHUNK_ROWS):
            yield from self.take(np.arange(lo, min(lo + KEY_CHUNK_ROWS, len(self))))

    def index(self, key: str, start: int = 0, stop: int | None = None) -> int:
        stop = len(self) if stop is None else stop
        for lo in range(start, stop, KEY_CHUNK_ROWS):
            chunk = self.take(np.arange(lo, min(lo + KEY_CHUNK_ROWS, stop)))
            if key in chunk:
                return lo + chunk.index(key)
        raise ValueError(f"{key!r} is not a matched key")

    def __contains__(self, key: object) -> bool:
        try:
            self.index(key)  # type: ignore[arg-type]
        except ValueError:
            return False
        return True

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list | tuple | MatchedKeys):
            return len(other) == len(self) and list(other) == list(self)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compares as a list does

    def __repr__(self) -> str:
        return f"MatchedKeys({len(self)} rows)"


def _is_ascii(table: Strings) -> bool:
    """Whether every byte of the table is ASCII (a character per byte)."""
    blob = np.frombuffer(table.blob, dtype=np.uint8)
    return not len(blob) or int(blob.max()) < 0x80


def _digits(values: np.ndarray) -> np.ndarray:
    """How many decimal digits each positive integer has."""
    digits = np.ones(len(values), dtype=np.int64)
    rest = values // 10
    while rest.any():
        digits += rest > 0
        rest //= 10
    return digits


def keys_at(keys: Sequence[str], rows: np.ndarray) -> list[str]:
    """``[keys[i] for i in rows]`` for a list or a lazy key column, decoding only those."""
    if isinstance(keys, MatchedKeys):
        return keys.take(rows)
    if isinstance(keys, StringColumn):
        return keys.rows(rows)
    return list(map(keys.__getitem__, np.asarray(rows, dtype=np.int64).tolist()))
