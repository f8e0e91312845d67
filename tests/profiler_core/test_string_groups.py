"""Grouping string-table ids by their text with numpy (string_groups) gives what grouping
the decoded Python strings gives: the same sorted labels and each row's group, for any text
(non-ASCII, NULs, equal texts under different ids) and for tables it cannot sort as bytes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from profiler_core.analysis import string_groups
from profiler_core.analysis.debug_groups import debug_groups
from profiler_core.analysis.string_groups import group_string_ids
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings

ALPHABET = ["a", "b", "z", "A", " ", "\x00", "\x7f", "é", "ÿ", "€", "𝄞"]


def by_python(table: Strings, ids: np.ndarray) -> tuple[list[str], list[int]]:
    """The independent way: decode every row, sort the set, look each row up."""
    names = [table[i] if i >= 0 else "" for i in ids.tolist()]
    labels = sorted(set(names) | {""})
    index = {label: i for i, label in enumerate(labels)}
    return labels, [index[n] for n in names]


def check(table: Strings, ids) -> None:
    ids = np.asarray(ids, dtype=np.int64)
    labels, group = group_string_ids(table, ids)
    assert (labels, group.tolist()) == by_python(table, ids)


@pytest.mark.parametrize("seed", range(200))
def test_random_texts_group_as_python_sorts_them(seed):
    rng = random.Random(seed)
    longest = 20 if seed % 3 else 3  # short texts: many equal ones and shared prefixes
    items = [
        "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest)))
        for _ in range(rng.randint(0, 40))
    ]
    items += [rng.choice(items) for _ in range(5)] if items else []  # equal texts, two ids
    ids = [rng.randint(-1, len(items) - 1) for _ in range(rng.randint(0, 60))]
    check(Strings.from_list(items), ids)


def test_trailing_nuls_and_prefixes_are_different_texts():
    table = Strings.from_list(["a", "a\x00", "a\x00\x00", "", "ab", "a"])
    check(table, [0, 1, 2, 3, 4, 5, -1, 2])
    labels, _ = group_string_ids(table, np.array([2, 1, 0, 5]))
    assert labels == ["", "a", "a\x00", "a\x00\x00"]


def test_only_no_text_and_nothing_at_all():
    table = Strings.from_list([])
    assert group_string_ids(table, np.array([-1, -1]))[0] == [""]
    assert group_string_ids(table, np.array([], dtype=np.int64))[0] == [""]


def test_invalid_utf8_and_cut_characters_group_as_their_decoded_text():
    # "\xff\xfe" and "\xfe" both decode to replacement characters: bytes would mislead.
    check(Strings(b"ab\xff\xfecd\xfe\xc3", np.array([0, 2, 4, 6, 7, 8])), [0, 1, 2, 3, 4, -1])
    check(Strings("é€x".encode(), np.array([0, 1, 3, 6])), [0, 1, 2])  # offsets mid-character


def test_too_long_texts_are_grouped_as_python_strings(monkeypatch):
    monkeypatch.setattr(string_groups, "MAX_SORT_BYTES", 16)
    check(Strings.from_list(["b" * 30, "a", "b" * 30, "c"]), [0, 1, 2, 3, -1])


def test_debug_groups_of_a_lazy_column_equal_those_of_a_list():
    class Debug:
        def __init__(self, names):
            self.name = names

    names = ["m2", "m1", "", "m1", "é", "m10"]
    lazy = debug_groups(Debug(StringColumn.from_list(names)), "context")
    plain = debug_groups(Debug(names), "context")
    assert lazy.labels == plain.labels == ["", "m1", "m10", "m2", "é"]
    ids = np.array([0, 1, 2, 3, 4, 5, -1, 99])
    assert lazy.group_of(ids).tolist() == plain.group_of(ids).tolist() == [3, 1, 0, 1, 4, 2, 0, 0]


def test_decode_gives_each_string_without_keeping_the_table_decoded():
    texts = ["", "a", "é€", "x\x00y", "last"]
    table = Strings.from_list(texts)
    ids = np.array([4, -1, 2, 2, 0, 3, 1, -5])
    expected = [texts[i] if i >= 0 else "" for i in ids.tolist()]
    assert table.decode(ids) == expected
    assert table._decoded is None  # nothing kept: a chunk of rows costs only itself
    assert table.take(ids) == expected  # take() decodes the whole table and keeps it
    assert table.decode(ids) == expected  # the kept table gives the same strings
    with pytest.raises(IndexError):
        Strings.from_list(texts).decode(np.array([0, 5]))
    with pytest.raises(IndexError):
        table.decode(np.array([5]))


def test_debug_groups_labels_stay_string_ids_until_asked():
    table = Strings.from_list(["b", "a", "", "a"])
    column = StringColumn(table, np.array([0, 1, 3, 2, -1]))

    class Debug:
        name = column
        parent = np.full(5, -1)

    groups = debug_groups(Debug(), "context")
    assert isinstance(groups.label_column, StringColumn)
    assert groups.labels == ["", "a", "b"]
    assert groups.group_of(np.array([0, 1, 2, 3, 4, -1])).tolist() == [2, 1, 1, 0, 0, 0]
