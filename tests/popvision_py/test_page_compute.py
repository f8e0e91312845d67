"""Pages whose view model is computed in a worker (app/page_compute.py), as the application
shows them: "Computing…" first, then the content built from the arrived view model; switching
away, closing or replacing the report meanwhile; and a view model that fails in the worker."""

from __future__ import annotations

import numpy as np
import pytest
import shiboken6

from popvision_py.app.loader import BackgroundLoader
from popvision_py.views.execution_trace.view import ExecutionTraceView
from popvision_py.views.insights.view import InsightsView
from popvision_py.views.liveness.view import LivenessView
from tests.popvision_py.conftest import wait_loaded


@pytest.fixture
def worker_window(opened_window):
    opened_window.pages_in_worker = True  # as the application runs
    return opened_window


def wait_computed(qtbot, window, title: str) -> None:
    qtbot.waitUntil(lambda: title not in window._unbuilt, timeout=20_000)


def test_liveness_says_computing_then_shows_the_peak_from_the_worker(qtbot, worker_window):
    window = worker_window
    window.show_view("Liveness")
    view = window.current_view()
    assert view.title == "Liveness" and view.computes
    assert view.showing_computing()
    assert view.computing_label.text() == "Computing Liveness for tutorial4…"
    assert view.chart is None  # no widget is built before the view model arrives
    wait_computed(qtbot, window, "Liveness")
    assert not view.showing_computing() and not view.showing_message()
    liveness = window.opened[0].report.liveness
    live = np.asarray(liveness.step_live_bytes, dtype=np.int64)
    step = int(np.argmax(live))
    peak = int(live[step]) + int(liveness.always_live_bytes)
    assert f"{peak:,} bytes" in view.chart.peak_label.text()
    assert f"at step {step:,} " in view.chart.peak_label.text()
    # the first details tab was filled from the worker's always-live table
    graph = window.opened[0].report.graph
    assert view.always_live.model.rowCount() == int(np.count_nonzero(graph.var_always_live))


def test_insights_tables_are_filled_from_the_worker(qtbot, worker_window):
    window = worker_window
    window.show_view("Insights")
    view = window.current_view()
    assert isinstance(view, InsightsView) and view.showing_computing()
    assert view.model is None
    wait_computed(qtbot, window, "Insights")
    assert not view.showing_message()
    report = window.opened[0].report
    totals = np.asarray(report.memory.by_category).sum(axis=0)
    assert view.tile_facts.model.rowCount() == report.target.num_tiles == len(totals)
    assert view.ipu_facts.model.rowCount() == report.target.num_ipus
    fullest = int(np.argmax(totals))
    assert view.top_tiles.tree.topLevelItem(0).text(0).startswith(f"Tile {fullest}:")


def test_switching_away_while_it_computes_builds_it_for_when_it_is_shown(qtbot, worker_window):
    window = worker_window
    window.show_view("Execution Trace")
    trace = window.current_view()
    assert isinstance(trace, ExecutionTraceView) and trace.showing_computing()
    window.show_view("Memory")  # a page without a worker's part is built at once
    assert window.current_view().title == "Memory" and window.view("Memory").models
    wait_computed(qtbot, window, "Execution Trace")
    assert trace.model is not None and trace.model.report is window.opened[0].report
    window.show_view("Execution Trace")
    assert not trace.showing_computing() and not trace.showing_message()
    assert trace.plot.lane_axis.names[:1] == ["IPU 0"]  # what the lanes show


def test_closing_the_report_while_it_computes_drops_the_result(qtbot, worker_window):
    window = worker_window
    window.show_view("Liveness")
    view = window.current_view()
    assert view.showing_computing()
    window.close_report()
    window.page_computer.wait()
    qtbot.wait(50)  # the worker's late result, if any, is delivered now
    assert view.chart is None and view.opened is None
    assert view.message.text() == "No report is open."
    assert window.page_failures == []


def test_a_report_opened_while_it_computes_shows_the_new_one(
    qtbot, worker_window, tutorial4_variant_report
):
    window = worker_window
    window.show_view("Liveness")
    view = window.current_view()
    assert view.showing_computing()
    window.open_paths([tutorial4_variant_report])
    wait_loaded(qtbot, window)
    wait_computed(qtbot, window, "Liveness")
    window.page_computer.wait()
    qtbot.wait(50)
    assert window.opened[0].name == tutorial4_variant_report.name
    assert view.model.report is window.opened[0].report  # not the closed report's
    assert view.computing_label.text().endswith(f"for {tutorial4_variant_report.name}…")


def test_a_view_model_that_fails_in_the_worker_shows_the_failure(qtbot, worker_window, monkeypatch):
    window = worker_window

    def broken(self, opened, other):
        raise ZeroDivisionError("a bug in the Liveness view model")

    monkeypatch.setattr(LivenessView, "compute", broken)
    window.show_view("Liveness")
    view = window.current_view()
    assert view.showing_computing()
    wait_computed(qtbot, window, "Liveness")
    assert view.showing_message()
    assert "ZeroDivisionError: a bug in the Liveness view model" in view.message.text()
    assert window.page_failures[-1].startswith("The Liveness page could not show tutorial4")


def test_view_fetches_the_page_built_even_while_a_worker_computes_it(qtbot, worker_window):
    window = worker_window
    window.show_view("Insights")
    assert window.current_view().showing_computing()
    insights = window.view("Insights")  # built now, on this thread
    assert "Insights" not in window._unbuilt and insights.model is not None
    assert not insights.showing_computing() and not insights.showing_message()
    window.page_computer.wait()
    qtbot.wait(50)
    assert window.page_failures == []


def test_screenshots_of_a_page_computing(qtbot, worker_window, screenshot_dir):
    window = worker_window
    folder = window.paths[0]
    for theme in ("light", "dark"):
        window.set_theme(theme)
        window.close_report()
        window.open_paths([folder])
        wait_loaded(qtbot, window)
        qtbot.wait(20)  # the theme reaches every widget
        window.show_view("Insights")
        assert window.current_view().showing_computing()
        assert window.grab().save(str(screenshot_dir / f"page-computing-{theme}.png"))
        wait_computed(qtbot, window, "Insights")
    window.set_theme("light")


def test_a_result_arriving_after_its_loader_was_deleted_is_dropped_quietly(qtbot, tutorial4_report):
    # The debug.cbor and page workers can outlive their window (closed, then deleted): a
    # result queued for the GUI thread must not emit from the deleted loader.
    loader = BackgroundLoader()
    loader.start(lambda _progress, _stopped: {}, tutorial4_report)
    assert loader.wait(10_000)  # done: its result waits in this thread's event queue
    shiboken6.delete(loader)
    qtbot.wait(50)  # delivered now: dropped, with no exception in the event loop


def test_screenshot_mode_waits_for_pages_computed_in_a_worker(qtbot, worker_window, tmp_path):
    """``--screenshot-dir`` (``make run``) saved 23 PNGs saying "Computing…" (02-insights,
    04-liveness, 08-execution-trace, ...): every grab now waits for the page's worker."""
    from popvision_py.app.screenshots import save_screenshots

    window = worker_window
    computing_at_grab = []
    real_grab = window.grab

    def grab(*args):
        view = window.current_view()
        if getattr(view, "showing_computing", lambda: False)():
            computing_at_grab.append(view.title)
        return real_grab(*args)

    window.grab = grab
    saved = save_screenshots(window, tmp_path)
    names = [path.stem for path in saved]
    assert {"02-insights", "04-liveness", "08-execution-trace"} <= set(names)
    assert computing_at_grab == []
    assert not window.page_computer.busy
    # what the Liveness PNG shows is the chart, not the busy page
    assert window.view("Liveness").chart is not None
