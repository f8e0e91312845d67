"""Issue 29 point 5 in compare: a label has one colour on both sides (B's label ids differ
from A's when its trace names them in another order), and B's instants and graphs are drawn
under B's timeline as A's are under A's, each on its side's time axis."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from popvision_py.views.system_trace.charts import InstantsPlot, SeriesPlot
from profiler_core.trace import open_trace
from tests.conftest import run_example_with_trace
from tests.popvision_py.test_system_trace_compare import open_compared


def report_with_epochs(tmp: Path, report: Path, *args: str) -> Path:
    folder = tmp / "report"
    folder.mkdir()
    for name in ("profile.pop", "debug.cbor"):
        shutil.copy(report / name, folder / name)
    run_example_with_trace("pvti_epochs.py", folder, *args)
    return folder


@pytest.fixture(scope="module")
def epoch_reports(tmp_path_factory, tutorial4_report) -> tuple[Path, Path]:
    a = report_with_epochs(tmp_path_factory.mktemp("epochs_a"), tutorial4_report, "3", "4")
    # Labels take ids in order of first use: B's prefetch thread uses "Load batch" while
    # the first epoch runs, so B's labels after it have other ids than A's.
    b = report_with_epochs(
        tmp_path_factory.mktemp("epochs_b"), tutorial4_report, "2", "8", "--prefetch"
    )
    return a, b


def test_one_label_is_one_colour_on_both_sides(qtbot, window, epoch_reports):
    a, b = epoch_reports
    labels = [open_trace(next(p.glob("*.pvti"))).labels for p in (a, b)]
    common = sorted(set(labels[0]) & set(labels[1]))
    assert any(labels[0].index(x) != labels[1].index(x) for x in common)  # ids differ
    view = open_compared(qtbot, window, a, b)
    assert view.compare is not None
    models = [t.model for t in view.compare.traces]
    for label in common:
        ids = [side.trace.labels.index(label) for side in models]
        assert tuple(models[0].colors[ids[0]]) == tuple(models[1].colors[ids[1]]), label
    # as drawn: the Step spans of both timelines in one colour
    window.grab()
    drawn = []
    for plot, model in zip(view.compare.stacked.plots, models, strict=True):
        batch = plot.spans.batch
        step = model.trace.labels.index("Step")
        mine = [i for i, k in enumerate(batch.key.tolist())
                if k >= 0 and int(model.trace.label[k]) == step]  # fmt: skip
        assert mine
        drawn.append({tuple(batch.color[i]) for i in mine})
    assert drawn[0] == drawn[1] and len(drawn[0]) == 1


def test_b_instants_and_graphs_are_drawn_like_a(qtbot, window, epoch_reports):
    view = open_compared(qtbot, window, *epoch_reports)
    compare = view.compare
    assert compare is not None
    for side, trace in enumerate(compare.traces):
        charts = compare.side_charts[side]
        kinds = [type(c) for c in charts]
        graphs = list(trace.model.trace.series)
        assert kinds == [InstantsPlot] + [SeriesPlot] * len(graphs) and graphs
        assert [c.graph for c in charts[1:]] == graphs
        instants = trace.model.instant_events
        assert len(instants) > 0 and charts[0].item.model is trace.model
        for chart in charts:
            assert chart.isVisible()
    # each side's charts follow its own timeline (both from their first event)
    compare.stacked.plots[0].set_x_range(*compare.stacked.plots[0].x_range)
    for side in (0, 1):
        plot = compare.stacked.plots[side]
        x0, x1 = plot.x_range
        for chart in compare.side_charts[side]:
            c0, c1 = chart.view_box.viewRange()[0]
            assert np.isclose(c0, x0) and np.isclose(c1, x1)
