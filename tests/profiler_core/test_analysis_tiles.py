"""Tile selections as users type them: parsed, refused with a reason, and written back."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiler_core.analysis.tiles import SelectionError, format_tile_selection, parse_tile_selection
from profiler_core.errors import ReportError


@pytest.mark.parametrize(
    ("text", "tiles"),
    [
        ("", []),
        ("5", [5]),
        ("0,5,3-6", [0, 3, 4, 5, 6]),
        (" 7 ; 2 - 3 ,, ", [2, 3, 7]),
        ("1-1", [1]),
        ("9,9,9", [9]),
    ],
)
def test_selections_select_sorted_unique_tiles(text, tiles):
    assert parse_tile_selection(text, 10).tolist() == tiles


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("x", "is not a tile or a range"),
        ("5-", "is not a tile or a range"),
        ("-3", "is not a tile or a range"),
        ("6-2", "from the lower tile to the higher"),
        ("10", "tiles go from 0 to 9"),
        ("3-10", "tiles go from 0 to 9"),
    ],
)
def test_bad_selections_say_which_part_is_wrong(text, reason):
    with pytest.raises(SelectionError, match=reason) as caught:
        parse_tile_selection(text, 10)
    assert isinstance(caught.value, ReportError)
    assert repr(text.strip()) in str(caught.value)


def test_formatting_writes_runs_as_ranges():
    assert format_tile_selection(np.array([7, 0, 1, 2, 5, 6])) == "0-2,5-7"
    assert format_tile_selection(np.array([], dtype=np.int64)) == ""
    assert format_tile_selection(np.array([3])) == "3"


@given(st.sets(st.integers(0, 1471), max_size=60))
def test_formatting_then_parsing_gives_the_same_tiles(tiles):
    text = format_tile_selection(np.array(sorted(tiles), dtype=np.int64))
    assert parse_tile_selection(text, 1472).tolist() == sorted(tiles)
