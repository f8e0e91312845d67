"""Matching the rows of two tables by key, for comparisons: an outer join in which a row
found on one side only stays, marked, with zeros on the other side."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import filterfalse, repeat

import numpy as np


@dataclass(frozen=True)
class Matched:
    """Rows of A and B matched by key: A's order first, then B's rows A does not have."""

    keys: list[str]
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


def match_rows(
    keys_a: list[str],
    columns_a: dict[str, np.ndarray],
    keys_b: list[str],
    columns_b: dict[str, np.ndarray],
) -> Matched:
    """Join two tables on unique keys; both must have the same value columns."""
    if list(columns_a) != list(columns_b):
        raise ValueError("both tables need the same columns to be matched")
    if keys_a == keys_b:  # the same rows in the same order (a report against a re-run)
        rows = np.arange(len(keys_a), dtype=np.int64)
        if len(set(keys_a)) != len(keys_a):
            raise ValueError("the keys of A repeat; make them unique with occurrence_keys")
        every = np.ones(len(rows), dtype=bool)
        return Matched(
            keys=list(keys_a),
            in_a=every,
            in_b=every.copy(),
            a={name: _take(values, rows) for name, values in columns_a.items()},
            b={name: _take(values, rows) for name, values in columns_b.items()},
        )
    # dict(zip()) and map(dict.get) run in C: 400k keys a side in a fraction of a second.
    index_a = dict(zip(keys_a, range(len(keys_a)), strict=True))
    if len(index_a) != len(keys_a):
        raise ValueError("the keys of A repeat; make them unique with occurrence_keys")
    index_b = dict(zip(keys_b, range(len(keys_b)), strict=True))
    if len(index_b) != len(keys_b):
        raise ValueError("the keys of B repeat; make them unique with occurrence_keys")
    only_b = list(filterfalse(index_a.__contains__, keys_b))
    keys = [*keys_a, *only_b]
    rows_a = np.full(len(keys), -1, dtype=np.int64)
    rows_a[: len(keys_a)] = np.arange(len(keys_a))
    rows_b = np.fromiter(map(index_b.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    in_a, in_b = rows_a >= 0, rows_b >= 0
    return Matched(
        keys=keys,
        in_a=in_a,
        in_b=in_b,
        a={name: _take(values, rows_a) for name, values in columns_a.items()},
        b={name: _take(values, rows_b) for name, values in columns_b.items()},
    )


def _take(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    values = np.asarray(values)
    out = np.zeros(len(rows), dtype=values.dtype)
    found = rows >= 0
    out[found] = values[rows[found]]
    return out
