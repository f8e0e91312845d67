"""Comparing two reports: memory and cycles per category, operations, variables and programs
matched by name, and reports of different sizes compared without error."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.compare import ROOT_KEY, compare_reports
from profiler_core.analysis.matching import match_rows, occurrence_keys
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.report import open_report
from tests.profiler_core.factories import make_profile, make_report


def test_tutorial4_against_its_variant_per_category_and_per_matmul(
    tutorial4_report, tutorial4_variant_report
):
    a, b = open_report(tutorial4_report), open_report(tutorial4_variant_report)
    comparison = compare_reports(a, b)
    memory = comparison.memory
    assert np.array_equal(memory.a, a.memory.by_category.sum(axis=1))
    assert np.array_equal(memory.diff, b.memory.by_category.sum(axis=1) - memory.a)
    # m1 grows from 900x600 to 1600x700 floats and m2 from 600x300 to 700x300: both host
    # written, so always live; m3 and m5 (read back) stay the size of m3 and m1 @ m2 @ m3
    grown = 4 * ((1600 * 700 - 900 * 600) + (700 * 300 - 600 * 300) + (1600 - 900) * 200)
    assert memory.diff[MemoryCategory.ALWAYS_LIVE_VARIABLES] == grown
    assert memory.per_tile_diff.shape == (len(MemoryCategory), 1472)
    assert memory.per_ipu.keys == ["IPU 0"]
    assert memory.total_b - memory.total_a == memory.diff.sum()

    cycles = comparison.cycles
    for run, side in ((a, cycles.a), (b, cycles.b)):
        duration = run.programs.step_cycles.max(axis=1)
        for kind in StepKind:
            steps = run.execution.runs[0].step_ids
            assert side[kind] == duration[steps][run.programs.step_kind[steps] == kind].sum()
    assert cycles.total_a == a.execution.runs[0].total_cycles
    assert cycles.total_b == b.execution.runs[0].total_cycles
    assert cycles.diff[StepKind.ON_TILE_EXECUTE] > 0  # more work for bigger matrices

    operations = comparison.operations("name")
    for op in ("m4", "m5"):
        row = operations.row(op)
        assert operations.in_a[row] and operations.in_b[row]
        assert operations.diff("total_cycles")[row] != 0
    m4 = operations.row("m4")
    # m4 = m1 @ m2 is 900x300 then 1600x300 floats
    assert operations.diff("variable_bytes")[m4] >= (1600 - 900) * 300 * 4
    assert (
        operations.a["total_cycles"][m4] + operations.a["total_cycles"][operations.row("m5")]
        == cycles.total_a
    )


def test_variables_programs_and_steps_match_by_name(tutorial4_report, tutorial4_variant_report):
    comparison = compare_reports(
        open_report(tutorial4_report), open_report(tutorial4_variant_report)
    )
    variables = comparison.variables
    assert variables.keys[:3] == ["m1", "m2", "m3"]
    assert variables.diff("bytes")[variables.row("m1")] == 4 * (1600 * 700 - 900 * 600)
    assert variables.diff("bytes")[variables.row("m3")] == 0
    assert "partials #2" in variables.keys  # the second matmul's partials meet each other
    a_graph = comparison.a.graph
    in_a = variables.in_a
    assert (
        variables.a["always_live"][in_a].tolist()
        == a_graph.var_always_live[: in_a.sum()].astype(int).tolist()
    )  # A's rows come first, in A's order
    assert set(variables.diff("always_live").tolist()) <= {-1, 0, 1}
    programs = comparison.programs
    # the root sequences are named after their programs ("tutorial4", "variant"): roots are
    # keyed by position instead, so the two programs' roots meet (all cycles of the run)
    root = programs.row(ROOT_KEY)
    assert programs.in_a[root] and programs.in_b[root]
    assert "tutorial4" not in programs.keys and "variant" not in programs.keys
    # each run has four syncs of 124 + 150 cycles (the calibrated sync and the IPU Model's
    # default relative sync delay): 856 more than the 60-cycle syncs these were pinned with
    assert (programs.a["cycles"][root], programs.b["cycles"][root]) == (22756 + 856, 39604 + 856)
    assert programs.in_a[programs.row("m5/Reduce")] and programs.in_b[programs.row("m5/Reduce")]
    steps = comparison.steps
    assert steps.in_a.all() and steps.in_b.all() and len(steps) == 12


def test_reports_of_different_sizes_compare_without_error():
    small, _ = make_report(1)
    big = make_profile(1, num_ipus=3, tiles_per_ipu=5, num_steps=14, num_variables=11)
    comparison = compare_reports(small, big)
    memory = comparison.memory
    assert memory.per_tile_diff is None
    assert memory.per_ipu.keys == ["IPU 0", "IPU 1", "IPU 2"]
    assert memory.per_ipu.in_a.tolist() == [True, True, False]
    assert memory.per_ipu.a["Stack"][2] == 0
    assert np.array_equal(
        memory.diff, big.memory.by_category.sum(1) - small.memory.by_category.sum(1)
    )
    steps = comparison.steps
    assert len(steps) == 14 and steps.in_b.all() and steps.in_a.sum() == 10
    variables = comparison.variables
    assert variables.in_b.sum() == 11 and variables.in_a.sum() == 8
    assert len(comparison.operations("op")) >= 1
    assert comparison.cycles.runs.keys == ["run 0", "run 1"]


def test_matching_keeps_rows_found_on_one_side_only():
    matched = match_rows(["x", "y"], {"v": np.array([1, 2])}, ["z", "x"], {"v": np.array([30, 10])})
    assert matched.keys == ["x", "y", "z"]
    assert matched.in_a.tolist() == [True, True, False]
    assert matched.in_b.tolist() == [True, False, True]
    assert matched.diff("v").tolist() == [9, -2, 30]
    assert occurrence_keys(["a", "b", "a", "a"]) == ["a", "b", "a #2", "a #3"]
    with pytest.raises(ValueError):
        match_rows(["x", "x"], {"v": np.array([1, 2])}, [], {"v": np.array([], int)})


def test_matching_the_same_keys_in_the_same_order():
    """The fast path (B has A's keys in A's order) gives what a dict-based join gives."""
    keys = [f"op{i}" for i in range(5)]
    a, b = np.array([5, 0, 7, 1, 2]), np.array([6, 3, 7, 0, 9])
    matched = match_rows(keys, {"v": a}, list(keys), {"v": b})
    assert matched.keys == keys and matched.in_a.all() and matched.in_b.all()
    assert matched.a["v"].tolist() == [5, 0, 7, 1, 2]
    assert matched.diff("v").tolist() == [1, 3, 0, -1, 7]
    assert matched.a["v"] is not a  # a copy: the caller's column is not shared
    with pytest.raises(ValueError, match="repeat"):
        match_rows(["x", "x"], {"v": np.array([1, 2])}, ["x", "x"], {"v": np.array([1, 2])})


def test_occurrence_keys_of_unique_names_are_the_names():
    names = (f"v{i}" for i in range(4))  # any iterable, read once
    assert occurrence_keys(names) == ["v0", "v1", "v2", "v3"]
    assert occurrence_keys(iter(["a", "a"])) == ["a", "a #2"]
