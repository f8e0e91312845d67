"""The one Next / Previous cursor over search matches (Program Tree, System Trace)."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.search_matches import SearchMatches


def test_steps_wrap_round_both_ways_and_say_where_they_are():
    matches = SearchMatches()
    assert matches.describe() == "" and matches.step() == -1 and not matches.found
    assert matches.set("epoch", np.array([7, 3, 9])) == 3
    assert matches.describe() == "0 of 3"  # found, none shown yet
    assert [matches.step() for _ in range(4)] == [7, 3, 9, 7]
    assert matches.describe() == "1 of 3"
    assert [matches.step(backwards=True) for _ in range(2)] == [9, 3]
    matches.set("epoch", np.array([7, 3, 9]))
    assert matches.step(backwards=True) == 9  # backwards first shows the last


def test_no_match_and_reset():
    matches = SearchMatches()
    matches.set("nothing", np.zeros(0, dtype=np.int64))
    assert matches.found and matches.step() == -1 and matches.describe() == "no match"
    matches.reset()
    assert not matches.found and matches.describe() == ""
