"""Matching rows by key with numpy (matching.py) gives what a plain Python dict join gives: for
keys that repeat, are "", are found on one side only, live in two different string tables
under different ids, are not ASCII, or come from bytes that are not UTF-8 (the fallback)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from profiler_core.analysis import string_groups
from profiler_core.analysis.matched_keys import MatchedKeys, keys_at
from profiler_core.analysis.matching import match_names, match_rows, occurrence_keys, outer_join
from profiler_core.analysis.string_groups import joint_text_ranks
from profiler_core.cli.tables import TextColumn
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings

# No "#": a name "x #2" of its own would be the dict join's key of the second "x" too.
ALPHABET = ["a", "b", "z", "/", " ", "2", "é", "€", "𝄞", "\x00"]


def dict_join(names_a, values_a, names_b, values_b):
    """The independent way: number repeats in Python ("x", "x #2", ...), then join with
    dicts: A's keys in order, then B's keys A lacks in B's order; 0 on the missing side."""

    def numbered(names):
        seen: dict[str, int] = {}
        keys = []
        for name in names:
            seen[name] = seen.get(name, 0) + 1
            keys.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
        return keys

    keys_a, keys_b = numbered(names_a), numbered(names_b)
    index_a = {k: i for i, k in enumerate(keys_a)}
    index_b = {k: i for i, k in enumerate(keys_b)}
    keys = keys_a + [k for k in keys_b if k not in index_a]
    a = [values_a[index_a[k]] if k in index_a else 0 for k in keys]
    b = [values_b[index_b[k]] if k in index_b else 0 for k in keys]
    return keys, [k in index_a for k in keys], [k in index_b for k in keys], a, b


def check(matched, names_a, values_a, names_b, values_b):
    keys, in_a, in_b, a, b = dict_join(names_a, values_a, names_b, values_b)
    assert list(matched.keys) == keys
    assert matched.in_a.tolist() == in_a and matched.in_b.tolist() == in_b
    assert matched.a["v"].tolist() == a and matched.b["v"].tolist() == b
    assert matched.diff("v").tolist() == [y - x for x, y in zip(a, b, strict=True)]


def column_of(rng: random.Random, names: list[str]) -> StringColumn:
    """``names`` as ids into a table of their own: shuffled, with spare and repeated texts
    (equal texts under two ids), and "" as id -1 or as a text of the table."""
    texts = sorted(set(names) | {"spare", "zz"})
    rng.shuffle(texts)
    texts += [rng.choice(texts)]  # one text twice: two ids, one text
    ids = []
    for name in names:
        if name == "" and rng.random() < 0.5:
            ids.append(-1)
            continue
        found = [i for i, t in enumerate(texts) if t == name]
        ids.append(rng.choice(found) if found else len(texts))
        if not found:
            texts.append(name)
    return StringColumn(Strings.from_list(texts), np.array(ids, dtype=np.int32))


def random_names(rng: random.Random, pool: list[str]) -> list[str]:
    return [rng.choice(pool) for _ in range(rng.randint(0, 40))]


@pytest.mark.parametrize("seed", range(150))
def test_names_match_as_a_dict_join_does(seed):
    rng = random.Random(seed)
    longest = 12 if seed % 2 else 3  # short names: many repeats and shared prefixes
    pool = ["", *("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, longest)))
                  for _ in range(rng.randint(1, 15)))]  # fmt: skip
    names_a, names_b = random_names(rng, pool), random_names(rng, pool)
    values_a = [rng.randint(-5, 100) for _ in names_a]
    values_b = [rng.randint(-5, 100) for _ in names_b]
    column_a, column_b = column_of(rng, names_a), column_of(rng, names_b)
    assert column_a.tolist() == names_a and column_b.tolist() == names_b
    va, vb = np.array(values_a, dtype=np.int64), np.array(values_b, dtype=np.int64)
    matched = match_names(column_a, {"v": va}, column_b, {"v": vb})
    assert isinstance(matched.keys, MatchedKeys)
    check(matched, names_a, values_a, names_b, values_b)
    # the plain-list path is the same join
    check(match_names(names_a, {"v": va}, names_b, {"v": vb}), names_a, values_a, names_b,
          values_b)  # fmt: skip
    # unique keys (each name once) through match_rows
    unique_a, unique_b = list(dict.fromkeys(names_a)), list(dict.fromkeys(names_b))
    ua, ub = np.arange(len(unique_a)) + 1, np.arange(len(unique_b)) * 10
    unique = match_rows(column_of(rng, unique_a), {"v": ua}, column_of(rng, unique_b), {"v": ub})
    check(unique, unique_a, ua.tolist(), unique_b, ub.tolist())


def test_the_same_texts_under_other_ids_in_another_table_meet():
    a = StringColumn(Strings.from_list(["x", "é€", "y", ""]), np.array([0, 1, 2, 3]))
    b = StringColumn(Strings.from_list(["q", "y", "é€", "x"]), np.array([1, 2, 3, -1, 0]))
    matched = match_rows(a, {"v": np.arange(4)}, b, {"v": np.arange(5) * 10})
    assert list(matched.keys) == ["x", "é€", "y", "", "q"]
    assert matched.b["v"].tolist() == [20, 10, 0, 30, 40]  # "" (A's text 3) meets B's id -1
    assert matched.in_a.tolist() == [True, True, True, True, False]
    assert matched.in_b.all()


def test_bytes_that_are_not_utf8_match_by_their_decoded_text():
    # b"\xff" and b"\xfe" both decode to one replacement character: equal texts, so they
    # meet, though their bytes differ (the Python fallback of the byte sort)
    a = Strings(b"ok\xff\xc3", np.array([0, 2, 3, 4]))
    b = Strings(b"\xfeok", np.array([0, 1, 3]))
    names_a, names_b = [a[i] for i in range(3)], [b[i] for i in range(2)]
    assert names_a == ["ok", "\ufffd", "\ufffd"] and names_b == ["\ufffd", "ok"]
    column_a = StringColumn(a, np.array([0, 1, 2]))
    column_b = StringColumn(b, np.array([0, 1]))
    va, vb = np.array([1, 2, 3]), np.array([10, 20])
    matched = match_names(column_a, {"v": va}, column_b, {"v": vb})
    check(matched, names_a, [1, 2, 3], names_b, [10, 20])
    assert list(matched.keys) == ["ok", "\ufffd", "\ufffd #2"]
    assert matched.keys.text_lengths() is None  # not ASCII: the widths need the texts


def test_too_long_texts_match_through_the_python_fallback(monkeypatch):
    monkeypatch.setattr(string_groups, "MAX_SORT_BYTES", 16)
    names_a, names_b = ["b" * 30, "a", "b" * 30], ["c", "b" * 30]
    matched = match_names(StringColumn.from_list(names_a), {"v": np.array([1, 2, 3])},
                          StringColumn.from_list(names_b), {"v": np.array([4, 5])})  # fmt: skip
    check(matched, names_a, [1, 2, 3], names_b, [4, 5])


def test_joint_ranks_order_texts_across_tables_as_python_sorts_them():
    rng = random.Random(7)
    texts_a = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6))) for _ in range(60)]
    texts_b = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6))) for _ in range(60)]
    texts_b += texts_a[:20]
    ids_a = np.array([rng.randint(-1, 59) for _ in range(100)])
    ids_b = np.array([rng.randint(-1, 79) for _ in range(100)])
    ranks_a, ranks_b = joint_text_ranks(
        [(Strings.from_list(texts_a), ids_a), (Strings.from_list(texts_b), ids_b)]
    )
    decoded = [texts_a[i] if i >= 0 else "" for i in ids_a.tolist()]
    decoded += [texts_b[i] if i >= 0 else "" for i in ids_b.tolist()]
    order = {text: rank for rank, text in enumerate(sorted(set(decoded)))}
    assert [*ranks_a.tolist(), *ranks_b.tolist()] == [order[t] for t in decoded]


def test_matched_keys_decode_rows_on_demand():
    a = StringColumn.from_list(["x", "y", "x", "", "x"])
    b = StringColumn.from_list(["z", "x", "x"])
    matched = match_names(a, {"v": np.arange(5)}, b, {"v": np.arange(3)})
    keys = matched.keys
    expected = ["x", "y", "x #2", "", "x #3", "z"]
    assert list(keys) == expected and keys == expected and len(keys) == 6
    assert keys[2] == "x #2" and keys[-1] == "z" and keys[1:4] == expected[1:4]
    assert keys[np.array([5, 0, 4])] == ["z", "x", "x #3"]
    assert keys_at(keys, np.array([3, 2])) == ["", "x #2"]
    assert keys_at(expected, np.array([3, 2])) == ["", "x #2"]
    assert matched.row("x #3") == 4 and "z" in keys and "x #4" not in keys
    assert keys.text_lengths().tolist() == [len(k) for k in expected]
    with pytest.raises(IndexError):
        keys[6]
    many = match_names(StringColumn.from_list(["v"] * 12), {"v": np.zeros(12, int)},
                       StringColumn.from_list(["w", ""]), {"v": np.zeros(2, int)}).keys  # fmt: skip
    assert many[11] == "v #12" and many.text_lengths().tolist() == [len(k) for k in many]
    assert many.text_lengths(10, 13).tolist() == [len(k) for k in many[10:13]]
    empty = StringColumn(Strings.from_list([]), np.array([-1, -1]))
    nothing = match_names(empty, {"v": np.zeros(2, int)}, empty, {"v": np.zeros(2, int)})
    assert list(nothing.keys) == ["", " #2"] and TextColumn(nothing.keys, "(none)").widest() == 6
    # the CLI's key column: "" shows as "(none)", and its width is found without decoding
    column = TextColumn(keys, "(none)")
    assert list(column) == ["x", "y", "x #2", "(none)", "x #3", "z"]
    assert column.widest() == len("(none)")
    assert TextColumn(MatchedKeys((["a"], ["b"]), (np.array([0]), np.array([-1])),
                                  (None, None)), "-").widest() is None  # fmt: skip


def test_a_name_like_a_numbered_repeat_stays_its_own_row():
    # "x #2" of A is a name of its own; the second "x" of A meets the second of B
    matched = match_names(StringColumn.from_list(["x", "x #2", "x"]), {"v": np.array([1, 2, 3])},
                          StringColumn.from_list(["x", "x"]), {"v": np.array([10, 30])})  # fmt: skip
    assert list(matched.keys) == ["x", "x #2", "x #2"]
    assert matched.b["v"].tolist() == [10, 0, 30]


def test_repeated_keys_of_match_rows_are_refused():
    with pytest.raises(ValueError, match="repeat"):
        match_rows(StringColumn.from_list(["x", "x"]), {"v": np.array([1, 2])},
                   StringColumn.from_list([]), {"v": np.array([], int)})  # fmt: skip
    assert occurrence_keys(["x", "x"]) == ["x", "x #2"]


def test_released_columns_are_taken_from_the_callers_dicts():
    columns_a = {"v": np.array([1, 2]), "w": np.array([3, 4])}
    same = columns_a["v"]
    columns_b = {"v": np.array([5]), "w": np.array([6])}
    matched = match_rows(["p", "q"], columns_a, ["q"], columns_b, release=True)
    assert columns_a == {} and columns_b == {}  # nothing held twice
    assert matched.a["v"] is same  # A's rows in A's order: used as they are
    assert matched.b["w"].tolist() == [0, 6]


@pytest.mark.parametrize("seed", range(20))
def test_hash_collisions_fall_back_to_the_byte_sort(monkeypatch, seed):
    # every text hashed alike: the check byte for byte finds it, the rows are sorted instead
    monkeypatch.setattr(string_groups, "_hashes",
                        lambda padded, lengths: np.zeros(len(lengths), np.uint64))  # fmt: skip
    rng = random.Random(seed)
    pool = ["", "a", "ab", "é", "a\x00", "zz/y", "€€"]
    names_a, names_b = random_names(rng, pool), random_names(rng, pool)
    va = np.arange(len(names_a), dtype=np.int64)
    vb = np.arange(len(names_b), dtype=np.int64) * 7
    matched = match_names(column_of(rng, names_a), {"v": va}, column_of(rng, names_b), {"v": vb})
    check(matched, names_a, va.tolist(), names_b, vb.tolist())


def test_unordered_codes_tell_texts_apart_as_the_ranks_do():
    rng = random.Random(3)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 9))) for _ in range(80)]
    table_a, table_b = Strings.from_list(texts), Strings.from_list(texts[::-1])
    ids_a = np.array([rng.randint(-1, 79) for _ in range(200)])
    ids_b = np.array([rng.randint(-1, 79) for _ in range(200)])
    parts = [(table_a, ids_a), (table_b, ids_b)]
    ranks = np.concatenate(joint_text_ranks(parts))
    codes = np.concatenate(joint_text_ranks(parts, ordered=False))
    same_rank = ranks[:, None] == ranks[None, :]
    assert np.array_equal(same_rank, codes[:, None] == codes[None, :])


def test_tables_of_the_same_bytes_are_ranked_once():
    texts = ["b", "a", "c", "a"]
    table, copy = Strings.from_list(texts), Strings.from_list(texts)
    assert string_groups._same_table(table, copy)
    assert not string_groups._same_table(table, Strings.from_list(["b", "a", "c", "b"]))
    assert not string_groups._same_table(table, Strings.from_list(["ba", "", "c", "a"]))
    ids = np.array([3, 0, -1, 2, 1])
    for other in (table, copy):
        ranks_a, ranks_b = joint_text_ranks([(table, ids), (other, ids[::-1])])
        assert ranks_a.tolist() == [1, 2, 0, 3, 1] and ranks_b.tolist() == [1, 3, 0, 2, 1]


@pytest.mark.parametrize("seed", range(30))
def test_outer_join_of_sparse_codes_equals_that_of_dense_ones(seed):
    # codes far apart take the sort path, ranks the lookup path: one join either way
    rng = random.Random(seed)
    codes_a = rng.sample(range(60), rng.randint(0, 30))
    codes_b = rng.sample(range(60), rng.randint(0, 30))
    keys, in_a, in_b, _, _ = dict_join([str(c) for c in codes_a], [0] * len(codes_a),
                                       [str(c) for c in codes_b], [0] * len(codes_b))  # fmt: skip
    for scale in (1, 10**15):
        rows_a, rows_b = outer_join(np.array(codes_a, np.int64) * scale,
                                    np.array(codes_b, np.int64) * scale)  # fmt: skip
        joined = [str(codes_a[i] if i >= 0 else codes_b[j])
                  for i, j in zip(rows_a.tolist(), rows_b.tolist(), strict=True)]  # fmt: skip
        assert joined == keys and (rows_a >= 0).tolist() == in_a and (rows_b >= 0).tolist() == in_b
        assert all(codes_b[j] == codes_a[i] for i, j in zip(rows_a, rows_b, strict=True)
                   if i >= 0 and j >= 0)  # fmt: skip
