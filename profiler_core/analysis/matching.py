"""Matching the rows of two tables by key, for comparisons: an outer join in which a row
found on one side only stays, marked, with zeros on the other side.

Keys are joined as integer codes with numpy (equal codes, equal keys): string-table ids
(``StringColumn``) by a joint ranking of both tables' texts, so 400,000 names a side are
never Python strings; plain lists by one dict of their distinct keys. The keys shown
(``Matched.keys``) are decoded only when read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, overload

import numpy as np

from profiler_core.analysis.string_groups import joint_text_ranks
from profiler_core.model.lazy_columns import StringColumn, as_str_list
from profiler_core.model.strings import Strings

#: Keys decoded at a time when a lazy key column is iterated or searched.
KEY_CHUNK_ROWS = 1 << 13


@dataclass(frozen=True)
class Matched:
    """Rows of A and B matched by key: A's order first, then B's rows A does not have."""

    keys: Sequence[str]  # a list, or MatchedKeys (decoded on demand) for string-table ids
    in_a: np.ndarray  # bool
    in_b: np.ndarray  # bool
    a: dict[str, np.ndarray]  # value columns of A, 0 where the row is not in A
    b: dict[str, np.ndarray]  # value columns of B, 0 where the row is not in B

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def columns(self) -> list[str]:
        return list(self.a)

    def diff(self, column: str) -> np.ndarray:
        """B minus A."""
        return self.b[column] - self.a[column]

    def row(self, key: str) -> int:
        return self.keys.index(key)


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


def occurrence_keys(names: Iterable[str]) -> list[str]:
    """Unique keys for names that may repeat: ``x``, ``x #2``, ``x #3`` in order of appearance,
    so the n-th ``partials`` of one report meets the n-th of the other."""
    names = names if isinstance(names, list) else list(names)
    if len(set(names)) == len(names):  # nothing repeats (400k variables): hashed once, in C
        return list(names)
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        keys.append(name if count == 1 else f"{name} #{count}")
    return keys


def key_codes(keys_a: Sequence[str], keys_b: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """An int64 code per key of A and of B: equal codes exactly where the keys are equal.
    Two StringColumns are ranked by their texts with numpy (their tables may differ); other
    keys are numbered by one dict of the distinct keys."""
    if isinstance(keys_a, StringColumn) and isinstance(keys_b, StringColumn):
        codes_a, codes_b = joint_text_ranks(  # equal or not is all a join asks
            [(keys_a.table, keys_a.ids), (keys_b.table, keys_b.ids)], ordered=False
        )
        return codes_a, codes_b
    list_a, list_b = as_str_list(keys_a), as_str_list(keys_b)
    index = dict.fromkeys(chain(list_a, list_b), 0)
    for code, key in enumerate(index):
        index[key] = code
    return tuple(  # type: ignore[return-value]
        np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=len(keys))
        for keys in (list_a, list_b)
    )


def occurrences(codes: np.ndarray) -> np.ndarray:
    """For each row, how many earlier rows have its code (0 for the first of a code)."""
    codes = np.asarray(codes, dtype=np.int64)
    if _dense(codes, len(codes)) and np.bincount(codes).max(initial=0) <= 1:
        return np.zeros(len(codes), dtype=np.int64)  # nothing repeats (400k variables)
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = np.ones(len(codes), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    position = np.arange(len(codes), dtype=np.int64)
    first = np.maximum.accumulate(np.where(starts, position, 0))
    out = np.empty(len(codes), dtype=np.int64)
    out[order] = position - first
    return out


def outer_join(codes_a: np.ndarray, codes_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each joined row's row in A and in B (-1 where it is not there): A's rows in A's
    order, then B's rows whose code A lacks, in B's order. Each side's codes are unique."""
    codes_a = np.asarray(codes_a, dtype=np.int64)
    codes_b = np.asarray(codes_b, dtype=np.int64)
    rows = len(codes_a) + len(codes_b)
    if _dense(codes_a, rows) and _dense(codes_b, rows):
        # Codes are small non-negative integers (ranks): B's row of each code by lookup.
        size = max(int(codes_a.max(initial=-1)), int(codes_b.max(initial=-1))) + 1
        row_of_code = np.full(size, -1, dtype=np.int64)
        row_of_code[codes_b] = np.arange(len(codes_b))
        b_of_a = row_of_code[codes_a]
        del row_of_code
        found = b_of_a >= 0
    else:
        order_b = np.argsort(codes_b, kind="stable")
        sorted_b = codes_b[order_b]
        if len(sorted_b):
            at = np.minimum(np.searchsorted(sorted_b, codes_a), len(sorted_b) - 1)
            found = sorted_b[at] == codes_a
            b_of_a = np.where(found, order_b[at], -1)
        else:
            found = np.zeros(len(codes_a), dtype=bool)
            b_of_a = np.full(len(codes_a), -1, dtype=np.int64)
        del order_b, sorted_b
    met = np.zeros(len(codes_b), dtype=bool)
    met[b_of_a[found]] = True
    only_b = np.flatnonzero(~met)
    rows_a = np.concatenate((np.arange(len(codes_a), dtype=np.int64), np.full(len(only_b), -1)))
    return rows_a, np.concatenate((b_of_a, only_b))


def _dense(codes: np.ndarray, rows: int) -> bool:
    """Whether ``codes`` are non-negative and below a few times ``rows`` (so an array indexed
    by code is no bigger than the rows' own columns)."""
    return not len(codes) or (int(codes.min()) >= 0 and int(codes.max()) < 4 * rows + 1024)


def match_rows(
    keys_a: Sequence[str],
    columns_a: dict[str, np.ndarray],
    keys_b: Sequence[str],
    columns_b: dict[str, np.ndarray],
    *,
    release: bool = False,
) -> Matched:
    """Join two tables on unique keys; both must have the same value columns. With
    ``release`` the two dicts are emptied as the matched columns are made (a column is then
    held twice only while it is copied, and not at all where it needs no reordering)."""
    codes_a, codes_b = key_codes(keys_a, keys_b)
    for codes, side in ((codes_a, "A"), (codes_b, "B")):
        if occurrences(codes).any():
            raise ValueError(f"the keys of {side} repeat; make them unique with match_names")
    return _joined((keys_a, columns_a, codes_a, None), (keys_b, columns_b, codes_b, None), release)


def match_names(
    names_a: Sequence[str],
    columns_a: dict[str, np.ndarray],
    names_b: Sequence[str],
    columns_b: dict[str, np.ndarray],
    *,
    release: bool = False,
) -> Matched:
    """Join two tables on names that may repeat: the n-th ``x`` of A meets the n-th of B,
    and its key shows as ``x #n`` (as ``occurrence_keys`` names it). ``release`` as in
    ``match_rows``."""
    codes_a, codes_b = key_codes(names_a, names_b)
    numbers_a, numbers_b = occurrences(codes_a), occurrences(codes_b)
    repeats = int(max(numbers_a.max(initial=0), numbers_b.max(initial=0)))
    if repeats:  # (name, n) as one code
        codes_a = codes_a * (repeats + 1) + numbers_a
        codes_b = codes_b * (repeats + 1) + numbers_b
    return _joined(
        (names_a, columns_a, codes_a, numbers_a if repeats else None),
        (names_b, columns_b, codes_b, numbers_b if repeats else None),
        release,
    )


_Side = tuple[Sequence[str], dict[str, np.ndarray], np.ndarray, np.ndarray | None]


def _joined(side_a: _Side, side_b: _Side, release: bool) -> Matched:
    names_a, columns_a, codes_a, numbers_a = side_a
    names_b, columns_b, codes_b, numbers_b = side_b
    if list(columns_a) != list(columns_b):
        raise ValueError("both tables need the same columns to be matched")
    rows_a, rows_b = outer_join(codes_a, codes_b)
    del codes_a, codes_b
    keys: Sequence[str]
    if isinstance(names_a, list | tuple) and isinstance(names_b, list | tuple):
        # Small tables (IPUs, runs, the GUI's steps): the keys as a list, as before.
        keys = MatchedKeys((names_a, names_b), (rows_a, rows_b), (numbers_a, numbers_b)).take(
            np.arange(len(rows_a))
        )
    else:
        keys = MatchedKeys((names_a, names_b), (rows_a, rows_b), (numbers_a, numbers_b))
    return Matched(
        keys=keys,
        in_a=rows_a >= 0,
        in_b=rows_b >= 0,
        a=_taken(columns_a, rows_a, release),
        b=_taken(columns_b, rows_b, release),
    )


def _taken(columns: dict[str, np.ndarray], rows: np.ndarray, release: bool) -> dict:
    """Each column at ``rows`` (0 where a row is -1), a column at a time; with ``release``
    each input column is dropped once taken, and used as it is when ``rows`` are its own."""
    own = release and _is_identity(rows, columns)
    out = {}
    for name in list(columns):
        values = columns.pop(name) if release else columns[name]
        out[name] = np.asarray(values) if own else _take(values, rows)
        del values
    return out


def _is_identity(rows: np.ndarray, columns: dict[str, np.ndarray]) -> bool:
    """Whether ``rows`` are 0, 1, ..., n - 1 for columns of n rows."""
    n = len(next(iter(columns.values()), ()))
    return len(rows) == n and bool((rows == np.arange(n)).all())


def _take(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    out = np.zeros(len(rows), dtype=values.dtype)
    found = rows >= 0
    out[found] = values[rows[found]]
    return out
