"""What opening does before and after the first paint: the Summary's sections come made by the
loader's worker, the graph's columns, the program steps' costs and debug.cbor are decoded by a
worker after the first paint, and a damaged one found then is named while every other page
works."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.summary import summary_sections
from profiler_core.formats.profile_pop import ProfileReader
from profiler_core.report import open_report
from tests.popvision_py.conftest import wait_loaded
from tests.profiler_core.checksummed import flip


def wait_debug(qtbot, window) -> None:
    qtbot.waitUntil(lambda: not window.after_paint.busy, timeout=20_000)


def test_the_summary_is_made_in_the_worker_and_debug_cbor_after_the_paint(
    qtbot, window, tutorial4_report
):
    at_loaded = []
    window.loader.loaded.connect(  # after the window's own slot has shown the report
        lambda opened: at_loaded.append(
            (opened[0].report.debug_loaded, window.after_paint.pending is opened)
        )
    )
    window.open_paths([tutorial4_report])
    wait_loaded(qtbot, window)
    assert at_loaded == [(False, True)]  # shown before debug.cbor was decoded
    opened = window.opened[0]
    summary = window.view("Summary")
    assert opened.summary is not None and summary.sections == [opened.summary]
    fresh = summary_sections(opened)  # the same sections when made here
    assert [(s.title, s.rows) for s in fresh] == [(s.title, s.rows) for s in opened.summary]
    assert summary.value("Graph", "Variables") == next(
        r.value for s in fresh if s.title == "Graph" for r in s.rows if r.label == "Variables"
    )
    wait_debug(qtbot, window)
    assert opened.report.debug_loaded and opened.errors == {}
    assert opened.report.debug is not None and len(opened.report.debug.name) > 0


def test_a_damaged_debug_cbor_is_named_after_opening_and_the_other_pages_work(
    qtbot, window, tutorial4_report, tmp_path
):
    folder = tmp_path / "tutorial4"
    shutil.copytree(tutorial4_report, folder)
    data = (folder / "debug.cbor").read_bytes()
    (folder / "debug.cbor").write_bytes(data[: len(data) // 2])  # cut in the middle
    window.open_paths([folder])
    wait_loaded(qtbot, window)
    wait_debug(qtbot, window)
    opened = window.opened[0]
    assert "debug" in opened.errors and "truncated" in str(opened.errors["debug"])
    text = "tutorial4: some sections could not be read (debug information (debug.cbor))"
    assert window.statusBar().currentMessage().startswith(text)
    assert window.message_box is not None and window.message_box.text().startswith(text)
    assert window.view("Memory").models  # the profile's pages still work
    assert not window.view("Liveness").showing_message()
    assert opened.missing("debug") is opened.errors["debug"]


def test_the_graph_is_decoded_after_the_paint_and_the_summary_shows_its_counts_before(
    qtbot, window, tutorial4_report
):
    decoded_at_loaded = []
    window.loader.loaded.connect(
        lambda opened: decoded_at_loaded.append(
            [opened[0].report.section_decoded(s) for s in ("graph", "programs", "program_steps")]
        )
    )
    window.open_paths([tutorial4_report])
    wait_loaded(qtbot, window)
    # the first paint did without the graph's columns and the program steps' costs
    assert decoded_at_loaded == [[False, False, True]]
    opened = window.opened[0]
    summary = window.view("Summary")
    shown = {k: summary.value("Graph", k) for k in ("Variables", "Vertices", "Compute sets")}
    wait_debug(qtbot, window)
    assert opened.report.section_decoded("graph") and opened.errors == {}
    graph = opened.report.graph  # the counts shown were the columns' own
    constants = int(graph.var_is_constant.sum())
    assert shown["Variables"] == f"{len(graph.var_name) - constants:,}"
    assert shown["Vertices"] == f"{int(graph.vc_count.sum()):,}"
    assert shown["Compute sets"] == f"{len(graph.cs_name):,}"
    assert opened.report.section_decoded("programs")  # the costs too, after the paint


# (section, the column changed after writing (bytes once in the file), a Summary row it does
# not stop, the section's title in the status bar, what the error says, a page it stops)
DAMAGED_AFTER_THE_PAINT = [
    (
        "graph",
        lambda r: np.asarray(r.graph.region_start, dtype=np.int64)[-4:],  # a region moved
        ("Graph", "Variables"),  # its counts are intact
        "graph",
        "section 'graph' fails its checksum",
        "Liveness",
    ),
    (
        "programs",
        lambda r: np.asarray(r.programs.step_cycles, dtype=np.int64),  # a step's cycles
        ("Graph", "Program steps"),  # the steps are checked apart from their costs
        "program tree",
        "section 'programs' (its steps' cycles and exchanges) fails its checksum",
        "Program Tree",
    ),
]


@pytest.mark.parametrize(
    ("section", "column", "row", "title", "problem", "stopped"),
    DAMAGED_AFTER_THE_PAINT,
    ids=[case[0] for case in DAMAGED_AFTER_THE_PAINT],
)
def test_a_section_damaged_after_the_paint_is_named_and_the_other_pages_work(
    qtbot, window, tutorial4_report, tmp_path, section, column, row, title, problem, stopped
):
    folder = tmp_path / "tutorial4"
    shutil.copytree(tutorial4_report, folder)
    with ProfileReader(folder / "profile.pop") as reader:
        flip(folder / "profile.pop", column(reader).tobytes(), 8, 0x04)
    window.open_paths([folder])
    wait_loaded(qtbot, window)
    assert window.opened[0].errors == {}  # not known at the first paint
    shown = window.view("Summary").value(*row)
    assert shown and shown == summary_value(tutorial4_report, row)  # the intact report's
    wait_debug(qtbot, window)
    opened = window.opened[0]
    assert problem in str(opened.errors[section])
    text = f"tutorial4: some sections could not be read ({title})"
    assert window.statusBar().currentMessage().startswith(text)
    assert window.message_box is not None and problem in window.message_box.text()
    assert window.view("Memory").models  # the pages without the section still work
    assert opened.missing(section) is opened.errors[section]
    window.show_view(stopped)
    assert window.view(stopped).showing_message()


def summary_value(folder, row: tuple[str, str]) -> str:
    """What the Summary shows in ``row`` for the intact report, made without the window."""
    with open_report(folder) as report:
        sections = summary_sections(OpenedReport(report))
    return next(r.value for s in sections if s.title == row[0] for r in s.rows if r.label == row[1])
