"""Matching the rows of two tables by key, for comparisons: an outer join in which a row
found on one side only stays, marked, with zeros on the other side.

Keys are joined as integer codes with numpy (equal codes, equal keys): string-table ids
(``StringColumn``) by a joint ranking of both tables' texts, so 400,000 names a side are
never Python strings; plain lists by one dict of their distinct keys. The keys shown
(``Matched.keys``) are decoded only when read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from profiler_core.analysis.matched_keys import MatchedKeys
from profiler_core.analysis.string_groups import joint_text_ranks
from profiler_core.model.lazy_columns import StringColumn, as_str_list


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
