"""Grouping rows by the text of their string-table ids without a Python string per row: the
distinct strings are sorted by their UTF-8 bytes (which sort as the text does) with numpy,
and only the distinct labels are decoded."""

from __future__ import annotations

import codecs
from collections.abc import Sequence

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


def _text_order(table: Strings, distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For sorted distinct ids (-1 allowed): each id's rank among the distinct texts, and the
    index into ``distinct`` of each rank's first id; None when the bytes do not sort as the
    decoded text would (invalid UTF-8 decodes with replacement characters) or are too long."""
    if len(distinct) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if distinct[-1] >= len(table):  # not a string of the table: let take() say so
        return None
    if distinct[-1] < 0:  # only -1, the empty text
        return np.zeros(1, np.int64), np.zeros(1, np.int64)
    blob = np.frombuffer(table.blob, dtype=np.uint8)
    offsets = table.offsets
    known = distinct >= 0
    row = np.where(known, distinct, 0)
    starts = np.where(known, offsets[row], 0)
    lengths = np.where(known, offsets[row + 1] - starts, 0)
    if (lengths < 0).any() or (starts < 0).any() or (starts + lengths > len(blob)).any():
        return None
    if not _is_utf8(blob, starts, lengths):
        return None
    width = (int(lengths.max()) + 7) // 8 * 8
    if width * len(distinct) > MAX_SORT_BYTES:
        return None
    padded = np.zeros((len(distinct), max(width, 8)), dtype=np.uint8)
    for j in range(int(lengths.max())):  # one byte position at a time, over every string
        rows = np.flatnonzero(lengths > j)
        padded[rows, j] = blob[starts[rows] + j]
    words = padded.view(">u8")  # big-endian words compare as the bytes do
    if _has_nul(blob):
        # lexsort's last key is the first compared; the length breaks ties of trailing NULs.
        keys = (words[:, k] for k in range(words.shape[1] - 1, -1, -1))
        order = np.lexsort((lengths, *keys))
    else:
        # Without NUL bytes the zero padding sorts first as a shorter text does: one sort of
        # the rows as byte strings, no contiguous copy of each word column as a key.
        order = np.argsort(padded.view(f"S{padded.shape[1]}").reshape(-1), kind="stable")
    # Neighbours compared a word column at a time: no sorted copy of the padded matrix.
    lengths = lengths[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = lengths[1:] != lengths[:-1]
    for k in range(words.shape[1]):
        column = words[:, k][order]
        new[1:] |= column[1:] != column[:-1]
    del padded, words
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.cumsum(new) - 1
    return ranks, order[new]


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
