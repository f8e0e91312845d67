"""Grouping rows by the text of their string-table ids without a Python string per row: the
distinct strings are sorted by their UTF-8 bytes (which sort as the text does) with numpy,
and only the distinct labels are decoded. The ids of several tables are ranked by text
together the same way (``joint_text_ranks``), to match two reports' rows by name."""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings
from profiler_core.model.unique import sorted_unique

#: The padded byte matrix the sort builds is at most this big; longer strings are grouped
#: as Python strings instead (a hostile file's megabyte-long name must not cost gigabytes).
MAX_SORT_BYTES = 64 << 20


def group_string_ids(table: Strings, ids: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The sorted distinct texts of ``table[ids]`` with "" always among them (id -1 is ""),
    and each id's index into them: ``sorted(set(texts) | {""})`` and each text's position,
    as the Python way gives them, equal texts under different ids in one group."""
    labels, group = group_string_ids_lazily(table, ids)
    return list(labels), group


def group_string_ids_lazily(table: Strings, ids: np.ndarray) -> tuple[Sequence[str], np.ndarray]:
    """``group_string_ids`` with the labels as a StringColumn of ``table`` when the texts
    sort as bytes: 400,000 labels stay int32 ids until a caller decodes the ones it shows."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    distinct = sorted_unique(ids)
    inverse = np.searchsorted(distinct, ids)
    order = _text_order(table, distinct)
    if order is None:  # not sortable as bytes: name each distinct id, group the names
        names = table.take(distinct)
        labels = sorted(set(names) | {""})
        index = {label: i for i, label in enumerate(labels)}
        group_of_distinct = np.array([index[n] for n in names], dtype=np.int64)
        return labels, group_of_distinct[inverse]
    ranks, firsts = order
    label_ids = distinct[firsts]
    first = int(label_ids[0]) if len(label_ids) else 0
    if not len(label_ids) or (first >= 0 and table.offsets[first + 1] > table.offsets[first]):
        label_ids = np.concatenate(([-1], label_ids))  # "" sorts first: id -1
        ranks += 1
    return StringColumn(table, label_ids), ranks[inverse]


def joint_text_ranks(
    parts: Sequence[tuple[Strings, np.ndarray]], ordered: bool = True
) -> list[np.ndarray]:
    """For each ``(table, ids)`` of ``parts``: each id's text as an int64 code, equal codes
    exactly where the decoded texts are equal (id -1 is ""), across different tables. With
    ``ordered`` the codes are the ranks of the texts in sorted order; without, only equality
    counts (the rows are grouped by a hash of their bytes, checked byte for byte: faster).
    The UTF-8 bytes are compared with numpy; when some table's bytes do not sort as its text
    (invalid UTF-8, too long) only the distinct texts are decoded and ranked as Python
    strings. Parts whose tables hold the same bytes (a report and its re-run) share one."""
    tables: list[Strings] = []  # the distinct tables, and each part's
    part_table = []
    for table, _ in parts:
        same = next((k for k, t in enumerate(tables) if _same_table(t, table)), None)
        if same is None:
            tables.append(table)
            same = len(tables) - 1
        part_table.append(same)
    distincts = [
        _distinct_ids(table, [ids for (_, ids), t in zip(parts, part_table, strict=True) if t == k])
        for k, table in enumerate(tables)
    ]
    order = _joint_text_order(list(zip(tables, distincts, strict=True)), ordered)
    if order is None:  # name each distinct id, rank the names
        names = [table.take(d) for table, d in zip(tables, distincts, strict=True)]
        index = {text: i for i, text in enumerate(sorted(set().union(*names)))}
        ranks = [np.fromiter(map(index.__getitem__, n), np.int64, len(n)) for n in names]
    else:
        bounds = np.cumsum([0, *map(len, distincts)]).tolist()
        ranks = [order[0][lo:hi] for lo, hi in pairwise(bounds)]
    del order  # each row's rank is looked up once the sort's arrays are gone
    return [
        _ranks_of(ranks[t], distincts[t], np.asarray(ids).reshape(-1), len(tables[t]))
        for (_, ids), t in zip(parts, part_table, strict=True)
    ]


def _distinct_ids(table: Strings, id_arrays: list[np.ndarray]) -> np.ndarray:
    """The sorted distinct ids of ``id_arrays``: marked in a table-sized mask when they are
    the table's (-1 included), else sorted (take() then says which id is not)."""
    ids = [np.asarray(a).reshape(-1) for a in id_arrays]
    if all(not len(a) or (int(a.min()) >= -1 and int(a.max()) < len(table)) for a in ids):
        seen = np.zeros(len(table) + 1, dtype=bool)
        for a in ids:
            seen[a.astype(np.int64) + 1] = True
        return np.flatnonzero(seen) - 1
    return sorted_unique(np.concatenate([*ids, np.zeros(0, np.int64)]))


def _ranks_of(ranks: np.ndarray, distinct: np.ndarray, ids: np.ndarray, size: int) -> np.ndarray:
    """The rank of each id, ``ranks[i]`` being that of ``distinct[i]``: looked up in a
    table-sized array when the ids are the table's, else found by binary search."""
    if len(distinct) and int(distinct[0]) >= -1 and int(distinct[-1]) < size:
        lookup = np.zeros(size + 1, dtype=np.int64)
        lookup[distinct + 1] = ranks
        return lookup[ids.astype(np.int64) + 1]
    return ranks[np.searchsorted(distinct, ids)]


def _same_table(a: Strings, b: Strings) -> bool:
    """Whether two tables hold the same strings at the same ids (compared a megabyte of
    bytes at a time)."""
    if a is b:
        return True
    if len(a.offsets) != len(b.offsets) or len(a.blob) != len(b.blob):
        return False
    if not np.array_equal(a.offsets, b.offsets):
        return False
    blob_a, blob_b = memoryview(a.blob).cast("B"), memoryview(b.blob).cast("B")
    step = 1 << 20
    return all(
        blob_a[lo : lo + step].tobytes() == blob_b[lo : lo + step].tobytes()
        for lo in range(0, len(blob_a), step)
    )


def _text_order(table: Strings, distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For sorted distinct ids (-1 allowed): each id's rank among the distinct texts, and the
    index into ``distinct`` of each rank's first id; None when the bytes do not sort as the
    decoded text would (invalid UTF-8 decodes with replacement characters) or are too long."""
    return _joint_text_order([(table, distinct)])


def _joint_text_order(
    parts: Sequence[tuple[Strings, np.ndarray]], ordered: bool = True
) -> tuple[np.ndarray, np.ndarray] | None:
    """``_text_order`` of the rows of every ``(table, distinct ids)`` part one after the
    other, each part's bytes read from its own table: ranks and firsts index that row order.
    Without ``ordered`` the ranks number equal texts alike but not in text order."""
    pieces = [_byte_ranges(table, distinct) for table, distinct in parts]
    if any(piece is None for piece in pieces):
        return None
    n = sum(len(distinct) for _, distinct in parts)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # int32 lengths (the rows are at most MAX_SORT_BYTES wide), each piece's own dropped
    lengths = np.concatenate([piece[2] for piece in pieces]).astype(np.int32)  # type: ignore[index]
    bounds = np.cumsum([0, *(len(d) for _, d in parts)]).tolist()
    pieces = [
        (blob, starts, lengths[lo:hi])
        for (blob, starts, _), (lo, hi) in zip(pieces, pairwise(bounds), strict=True)  # type: ignore[misc]
    ]
    longest = int(lengths.max())
    width = (longest + 7) // 8 * 8
    if width * n > MAX_SORT_BYTES:
        return None
    blobs = [blob for blob, _, _ in pieces]  # type: ignore[misc]
    padded = _padded_texts(pieces, max(width, 8))  # type: ignore[arg-type]
    del pieces  # the starts: only the bytes are compared from here
    hashes = None if ordered else _hashes(padded, lengths)
    if hashes is not None:
        order = np.argsort(hashes)  # equal texts together (equal hashes), in no text order
    elif any(_has_nul(blob) for blob in blobs):
        # lexsort's last key is the first compared; the length breaks ties of trailing NULs.
        words = padded.view(">u8")  # big-endian words compare as the bytes do
        order = np.lexsort((lengths, *(words[:, k] for k in range(words.shape[1] - 1, -1, -1))))
    else:
        # Without NUL bytes the zero padding sorts first as a shorter text does: one sort of
        # the rows as byte strings, no contiguous copy of each word column as a key.
        order = np.argsort(padded.view(f"S{padded.shape[1]}").reshape(-1), kind="stable")
    # Each row against the one before it in that order, a chunk of rows at a time: no
    # sorted copy of the padded matrix, nor of a column of it.
    words = padded.view(np.uint64)
    new = np.ones(len(order), dtype=bool)
    for lo in range(1, len(order), 1 << 16):
        here = order[lo : lo + (1 << 16)]
        before = order[lo - 1 : lo - 1 + len(here)]
        changed = lengths[here] != lengths[before]
        changed |= (words[here] != words[before]).any(axis=1)
        new[lo : lo + len(here)] = changed
        if hashes is not None and (changed & (hashes[here] == hashes[before])).any():
            return _joint_text_order(parts, ordered=True)  # two texts, one hash: sort them
    del padded, words, lengths, hashes
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.cumsum(new) - 1
    return ranks, order[new]


#: An odd 64-bit constant (the golden ratio's) that spreads bits when multiplied by.
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _hashes(padded: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's bytes and length (equal texts, equal hashes)."""
    words = padded.view(np.uint64)  # any fixed reading of the bytes will do
    hashes = lengths.astype(np.uint64) * _MIX
    for k in range(words.shape[1]):
        hashes ^= words[:, k]
        hashes *= _MIX
        hashes ^= hashes >> np.uint64(29)
    return hashes


def _padded_texts(
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]], width: int
) -> np.ndarray:
    """A row of ``width`` bytes per text of every ``(blob, starts, lengths)`` piece, in
    order: the text's bytes, then zeros."""
    padded = np.zeros((sum(len(lengths) for _, _, lengths in pieces), width), dtype=np.uint8)
    first_row = 0
    for blob, starts, lengths in pieces:
        _fill_rows(padded[first_row : first_row + len(lengths)], blob, starts, lengths)
        first_row += len(lengths)
    return padded


def _fill_rows(
    padded: np.ndarray, blob: np.ndarray, starts: np.ndarray, lengths: np.ndarray
) -> None:
    """Row i of ``padded`` := the ``lengths[i]`` bytes of ``blob`` from ``starts[i]``, then
    zeros. A window of the row's width is copied per row (one gather through a strided view
    of the blob), and the bytes past each text's end are cleared."""
    width = padded.shape[1]
    if not len(lengths) or not lengths.max(initial=0):
        return
    fits = starts + width <= len(blob)
    if len(blob) >= width:
        windows = np.lib.stride_tricks.as_strided(blob, (len(blob) - width + 1, width), (1, 1))
        every = bool(fits.all())
        rows = slice(None) if every else np.flatnonzero(fits)
        for lo in range(0, int(fits.sum()), 1 << 16):  # a chunk at a time: no second copy
            if every:
                padded[lo : lo + (1 << 16)] = windows[starts[lo : lo + (1 << 16)]]
            else:
                chunk = rows[lo : lo + (1 << 16)]  # type: ignore[index]
                padded[chunk] = windows[starts[chunk]]
        for j in range(int(lengths.min()), width):  # a column at a time: no (rows, width) mask
            padded[lengths <= j, j] = 0
    for j in range(int(lengths[~fits].max(initial=0))):  # the last texts of the blob
        rows = np.flatnonzero(~fits & (lengths > j))
        padded[rows, j] = blob[starts[rows] + j]


_NO_BYTES = np.zeros(0, dtype=np.uint8)


def _byte_ranges(
    table: Strings, distinct: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The blob, and each sorted distinct id's start and length in it (0 and 0 for -1); None
    when an id is not one of the table's, an offset is damaged or the text is not UTF-8."""
    if len(distinct) == 0 or distinct[-1] < 0:  # nothing, or only -1 (the empty text)
        return _NO_BYTES, np.zeros(len(distinct), np.int64), np.zeros(len(distinct), np.int64)
    if distinct[-1] >= len(table):  # not a string of the table: let take() say so
        return None
    blob = np.frombuffer(table.blob, dtype=np.uint8)
    offsets = table.offsets
    known = distinct >= 0
    row = np.where(known, distinct, 0)
    starts = np.where(known, offsets[row], 0)
    lengths = np.where(known, offsets[row + 1] - starts, 0)
    del known, row
    if (lengths < 0).any() or (starts < 0).any() or (starts + lengths > len(blob)).any():
        return None
    if not _is_utf8(blob, starts, lengths):
        return None
    return blob, starts, lengths


def _is_utf8(blob: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether each string is valid UTF-8: the whole blob is, and no string starts or ends
    inside a character (a damaged offset could cut one)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:  # a megabyte at a time: never the whole blob as one more bytes and one str
        for lo in range(0, len(blob), 1 << 20):
            decoder.decode(blob[lo : lo + (1 << 20)].tobytes())
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    used = lengths > 0
    ends = (starts + lengths)[used]
    edges = np.concatenate((blob[starts[used]], blob[ends[ends < len(blob)]]))
    return not ((edges & 0xC0) == 0x80).any()  # a continuation byte at a string's edge


def _has_nul(blob: np.ndarray) -> bool:
    """Whether the blob holds a NUL byte (looked for a megabyte at a time)."""
    return any(b"\0" in blob[lo : lo + (1 << 20)].tobytes() for lo in range(0, len(blob), 1 << 20))
