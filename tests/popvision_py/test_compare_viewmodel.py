"""Compare mode's Qt-free layer: names that tell A and B apart, % change, the A/B/Δ/% table
(largest change first, one-side rows marked, signed tints) and the banner's notes."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.compare import (
    ADDED_COLOR,
    LESS_COLOR,
    MORE_COLOR,
    REMOVED_COLOR,
    ComparePair,
    Sides,
    delta_table,
    pair_of,
    percent_change,
    side_names,
)
from popvision_py.viewmodels.compare_tables import liveness_sides, step_alignment
from popvision_py.viewmodels.opened import OpenedReport
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.matching import match_rows
from profiler_core.report import open_report


def test_names_grow_by_their_parents_until_they_differ(tmp_path):
    a, b = tmp_path / "x" / "a" / "tutorial4", tmp_path / "x" / "b" / "tutorial4"
    assert side_names(a, b) == ("a/tutorial4", "b/tutorial4")
    assert side_names(tmp_path / "one", tmp_path / "two") == ("one", "two")
    assert side_names(a, b, ("before", "after")) == ("before", "after")
    assert side_names(a, b, ("same", "same")) == ("a/tutorial4", "b/tutorial4")  # not apart
    assert side_names(a, a) == ("tutorial4 (A)", "tutorial4 (B)")


def test_percent_change_by_hand():
    got = percent_change(np.array([100, 0, 0, 50]), np.array([150, 0, 7, 25]))
    assert got[0] == 50.0 and got[1] == 0.0 and np.isinf(got[2]) and got[3] == -50.0


def test_delta_table_orders_by_change_and_marks_one_side_rows():
    matched = match_rows(
        ["m1", "m2", "gone"], {"bytes": np.array([10, 500, 30])},
        ["m2", "m1", "new"], {"bytes": np.array([400, 10, 70])},
    )  # fmt: skip
    table = delta_table(Sides.from_matched(matched, "bytes"), "Variable", ("A", "B"))
    shown = [[table.display(r, c) for c in range(6)] for r in range(len(table))]
    assert [row[0] for row in shown] == ["m2", "new", "gone", "m1"]  # |Δ| 100, 70, 30, 0
    assert shown[0][1:] == ["500", "400", "-100", "-20.0%", "changed"]
    assert shown[1][1:] == ["0", "70", "+70", "new", "only in B"]
    assert shown[2][1:] == ["30", "0", "-30", "-100.0%", "only in A"]
    assert shown[3][1:] == ["10", "10", "0", "0%", "same"]
    assert [table.tint(r) for r in range(4)] == [LESS_COLOR, ADDED_COLOR, REMOVED_COLOR, None]
    more = delta_table(Sides(["x"], np.array([1]), np.array([2])), "k", ("A", "B"))
    assert more.tint(0) == MORE_COLOR
    assert [c.header for c in table.columns][:4] == ["Variable", "A: A", "B: B", "Δ (B - A)"]


def test_pair_notes_and_swap(tutorial4_report, four_shards_report):
    a = OpenedReport(open_report(tutorial4_report))
    b = OpenedReport(open_report(four_shards_report))
    pair = pair_of(a, b)
    assert pair is pair_of(a, b)  # one comparison shared by every view
    note = " ".join(pair.notes())
    assert "1 IPU(s) vs 4" in note and not pair.same_tiles()
    swapped = pair.swapped()
    assert (swapped.a, swapped.b, swapped.names) == (b, a, pair.names[::-1])
    itself = ComparePair(a, OpenedReport(open_report(tutorial4_report)))
    assert itself.notes() == ["A and B are the same report: there is no difference."]
    assert itself.names == ("tutorial4 (A)", "tutorial4 (B)")


def test_liveness_aligns_by_step_when_the_programs_have_the_same_steps(
    tutorial4_report, tutorial4_variant_report, four_shards_report
):
    a_report, b_report = open_report(tutorial4_report), open_report(tutorial4_variant_report)
    pair = pair_of(OpenedReport(a_report), OpenedReport(b_report))
    sides, heading, alignment = liveness_sides(pair)
    a_live, b_live = (liveness_table(r).live_bytes() for r in (a_report, b_report))
    # Same program shape, other matrix sizes: the n-th step of A meets the n-th of B
    assert len(a_live) == len(b_live) and alignment == "step"
    assert "aligned by step" in heading
    np.testing.assert_array_equal(sides.a, a_live)
    np.testing.assert_array_equal(sides.b, b_live)
    assert sides.keys[0].startswith("0 ")

    # One IPU against four: other steps, so matched by kind and name, A's steps first
    shards = open_report(four_shards_report)
    pair = pair_of(OpenedReport(a_report), OpenedReport(shards))
    sides, heading, alignment = liveness_sides(pair)
    assert alignment == "name" and "programs differ" in heading
    np.testing.assert_array_equal(sides.a[: len(a_live)], a_live)
    shards_live = liveness_table(shards).live_bytes()
    assert sorted(sides.b[sides.b > 0].tolist()) == sorted(shards_live[shards_live > 0].tolist())


def test_step_alignment_needs_the_same_steps_in_order():
    assert step_alignment(["Sync", "OnTileExecute"], ["Sync", "OnTileExecute"]) == "step"
    assert step_alignment(["Sync", "OnTileExecute"], ["OnTileExecute", "Sync"]) == "name"
    assert step_alignment(["Sync"], ["Sync", "Sync"]) == "name"


def test_a_row_without_a_name_is_shown_as_none():
    table = delta_table(Sides(["", "m1"], np.array([5, 1]), np.array([9, 1])), "Op", ("A", "B"))
    assert [table.display(r, 0) for r in range(2)] == ["(none)", "m1"]
