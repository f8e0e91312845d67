"""numpy columns and string tables as Arrow arrays without a Python object per row: numbers
are wrapped where they lie, a report's string table (one UTF-8 blob and its offsets) becomes
one Arrow string array, and a column of string ids is Arrow's ``take`` of it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings


def ints(values: np.ndarray, null_below: int | None = None) -> pa.Array:
    """An int64 column; values below ``null_below`` (-1 meaning "none") become nulls."""
    array = np.asarray(values, dtype=np.int64)
    mask = None if null_below is None else array < null_below
    return pa.array(array, type=pa.int64(), mask=mask if mask is not None and mask.any() else None)


def floats(values: np.ndarray) -> pa.Array:
    return pa.array(np.asarray(values, dtype=np.float64), type=pa.float64())


def string_table(strings: Strings) -> pa.Array:
    """Every string of ``strings`` and one "" after them (the text of id -1), as one Arrow
    array over a copy of the blob: a report's string table is one copy, not a str each."""
    offsets = np.asarray(strings.offsets, dtype=np.int64)
    offsets = np.concatenate((offsets, offsets[-1:])) if offsets.size else np.zeros(2, np.int64)
    blob = bytes(strings.blob)
    return pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(blob)
    )


def take_strings(table: pa.Array, ids: np.ndarray) -> pa.Array:
    """The strings of ``ids`` in ``table`` (from ``string_table``), "" for -1 ids."""
    ids = np.asarray(ids, dtype=np.int64)
    last = len(table) - 1  # the "" string_table appends
    ids = np.where((ids < 0) | (ids >= last), last, ids)
    return pc.take(table, pa.array(ids)).cast(pa.string())


def text_column(column: Sequence[str]) -> pa.Array:
    """A label column of an analysis: a ``StringColumn`` through its string table, a list
    of str as it is."""
    if isinstance(column, StringColumn):
        return take_strings(string_table(column.table), column.ids)
    return pa.array(list(column), type=pa.string())


def names_of(names: Sequence[str], codes: np.ndarray) -> pa.Array:
    """Enum codes (a step's kind) as their names."""
    return pc.take(pa.array(list(names), type=pa.string()), pa.array(np.asarray(codes, np.int64)))
