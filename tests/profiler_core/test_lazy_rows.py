"""LazyRows: a column of strings made per row, that reads and compares as the list it is."""

from __future__ import annotations

import pytest

from profiler_core.analysis.lazy_rows import LazyRows, debug_rows


def test_rows_are_made_when_read_and_compare_as_a_list():
    made = []
    rows = LazyRows(4, lambda i: made.append(i) or f"v{i}")
    assert made == []  # nothing is made up front
    assert rows[2] == "v2" and rows[-1] == "v3" and made == [2, 3]
    assert rows[1:3] == ["v1", "v2"]
    expected = ["v0", "v1", "v2", "v3"]
    assert rows == expected and expected.__eq__(rows) is NotImplemented  # falls back to ours
    assert rows != ["v0"] and list(rows) == [f"v{i}" for i in range(4)]
    with pytest.raises(IndexError):
        rows[4]


def test_debug_rows_give_empty_text_for_no_context():
    class Debug:
        name = ("a", "b")

    assert debug_rows(Debug(), "name", [1, -1, 0, 7]) == ["b", "", "a", ""]
    assert debug_rows(None, "name", [0, 1]) == ["", ""]
