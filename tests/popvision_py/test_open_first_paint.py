"""What opening does before and after the first paint: the Summary's sections come made by the
loader's worker, the graph's columns, the program steps' costs and debug.cbor are decoded by a
worker after the first paint, and a damaged one found then is named while every other page
works."""

from __future__ import annotations

import shutil

import numpy as np

from popvision_py.viewmodels.summary import summary_sections
from profiler_core.formats.profile_pop import ProfileReader
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


def test_a_damaged_graph_section_is_named_after_the_paint_and_the_other_pages_work(
    qtbot, window, tutorial4_report, tmp_path
):
    folder = tmp_path / "tutorial4"
    shutil.copytree(tutorial4_report, folder)
    with ProfileReader(folder / "profile.pop") as reader:
        starts = np.asarray(reader.graph.region_start, dtype=np.int64)
    # a region start moved after writing (the column's last values: once in the file)
    flip(folder / "profile.pop", starts[-4:].tobytes(), 8, 0x04)
    window.open_paths([folder])
    wait_loaded(qtbot, window)
    assert "graph" not in window.opened[0].errors  # not known at the first paint
    assert window.view("Summary").value("Graph", "Variables")  # its counts are intact
    wait_debug(qtbot, window)
    opened = window.opened[0]
    assert "fails its checksum" in str(opened.errors["graph"])
    text = "tutorial4: some sections could not be read (graph)"
    assert window.statusBar().currentMessage().startswith(text)
    assert window.message_box is not None and "section 'graph'" in window.message_box.text()
    assert window.view("Memory").models  # the pages without the graph still work
    assert opened.missing("graph") is opened.errors["graph"]


def test_damaged_step_costs_are_named_after_the_paint_and_the_summary_shows_the_steps(
    qtbot, window, tutorial4_report, tmp_path
):
    folder = tmp_path / "tutorial4"
    shutil.copytree(tutorial4_report, folder)
    with ProfileReader(folder / "profile.pop") as reader:
        cycles = np.asarray(reader.programs.step_cycles, dtype=np.int64)
        steps = reader.programs.num_steps
    flip(folder / "profile.pop", cycles.tobytes(), 8, 0x04)  # a step's cycles changed
    window.open_paths([folder])
    wait_loaded(qtbot, window)
    assert window.opened[0].errors == {}  # not known at the first paint
    assert window.view("Summary").value("Graph", "Program steps") == f"{steps:,}"
    wait_debug(qtbot, window)
    opened = window.opened[0]
    assert "its steps' cycles and exchanges) fails its checksum" in str(opened.errors["programs"])
    text = "tutorial4: some sections could not be read (program tree)"
    assert window.statusBar().currentMessage().startswith(text)
    assert window.message_box is not None and "section 'programs'" in window.message_box.text()
    assert window.view("Memory").models  # the pages without the programs still work
    assert opened.missing("programs") is opened.errors["programs"]
    window.show_view("Program Tree")
    assert window.view("Program Tree").showing_message()
