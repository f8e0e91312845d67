"""The Operations view model without a window: columns equal the analysis, an operation's
steps, compute cycles per tile, FLOPs and debug contexts from independent numpy counts."""

from __future__ import annotations

import numpy as np

from benchmarks.synthetic_programs import operations
from popvision_py.viewmodels.operations import (
    GROUP_BY_LABELS,
    OperationsViewModel,
    operations_column_table,
)
from popvision_py.viewmodels.step_colors import step_kind_color
from popvision_py.views.operations.chart import tile_bars
from profiler_core.analysis.operations import OPERATION_GROUPINGS
from profiler_core.report import open_report


def contexts_under(debug, name: str) -> set[int]:
    """Contexts whose parent chain reaches the context called ``name`` (a hand walk)."""
    found = set()
    for context in range(len(debug)):
        c = context
        while c >= 0:
            if debug.name[c] == name:
                found.add(context)
                break
            c = int(debug.parent[c])
    return found


def test_every_grouping_of_the_analysis_has_a_label_users_know():
    assert set(GROUP_BY_LABELS) == set(OPERATION_GROUPINGS)


def test_columns_sort_and_filter_ten_thousand_operations():
    table = operations(10_000)
    columns = operations_column_table(table)
    total = columns.columns[1]
    assert np.array_equal(total.values, table.total_cycles)
    columns.sort(1, descending=True)
    shown = np.asarray(total.values)[columns.rows]
    assert (np.diff(shown) <= 0).all()
    columns.search("OP123")
    expected = [i for i, label in enumerate(table.labels) if "op123" in label.lower()]
    assert sorted(columns.rows.tolist()) == expected
    share = columns.columns[[c.header for c in columns.columns].index("% of total")]
    assert abs(float(np.sum(share.values)) - 100.0) < 1e-6
    assert share.display(0).endswith("%")


def test_an_operation_has_its_steps_tile_cycles_flops_and_contexts(tutorial4_report):
    report = open_report(tutorial4_report)
    model = OperationsViewModel(report, "name")
    debug, programs, graph = report.debug, report.programs, report.graph
    parts = model.parts("m5")
    mine = contexts_under(debug, "m5")
    assert set(parts.contexts.tolist()) == mine
    expected_steps = [s for s in range(programs.num_steps) if int(programs.step_debug[s]) in mine]
    assert parts.steps.tolist() == expected_steps and len(expected_steps) == 6
    expected_cs = [c for c in range(len(graph.cs_name)) if int(graph.cs_debug[c]) in mine]
    assert parts.compute_sets.tolist() == expected_cs
    per_tile = np.zeros(report.target.num_tiles, dtype=np.int64)
    for cs, tile, cycles in zip(
        programs.cst_cs, programs.cst_tile, programs.cst_cycles, strict=True
    ):
        if int(cs) in expected_cs:
            per_tile[int(tile)] += int(cycles)
    assert np.array_equal(model.tile_cycles(parts), per_tile)
    flops = model.flops_table(parts)
    in_op = np.isin(graph.vc_cs, expected_cs)
    assert int(np.sum(flops.columns[3].values)) == int(graph.vc_flops[in_op].sum())
    assert int(np.sum(flops.columns[2].values)) == int(graph.vc_count[in_op].sum())
    steps = model.steps_table(parts)
    duration = programs.step_cycles.max(axis=1)
    assert int(np.sum(steps.columns[4].values)) == int(duration[expected_steps].sum())
    kinds = programs.step_kind[expected_steps]
    assert list(steps.columns[2].colors) == [step_kind_color(k) for k in kinds]
    rows = dict(model.summary_rows("m5"))
    assert rows["Total cycles"] == f"{int(duration[expected_steps].sum()):,}"


def test_tile_bars_keep_the_hottest_tile_of_each_pixel():
    values = np.zeros(1472, dtype=np.int64)
    values[[3, 700, 1471]] = [50, 90, 20]
    x, width, height = tile_bars(values, 100)
    assert x.size <= 100 and width.sum() == 1472
    assert sorted(height[height > 0].tolist()) == [20, 50, 90]
    x, width, height = tile_bars(values[:40], 100)  # fewer tiles than pixels: a bar per tile
    assert x.tolist() == list(range(40)) and height[3] == 50
