"""The Insights page's "Try it" (issue 41): a finding's suggestion re-planned by the engine
off the GUI thread, with progress, and its predicted numbers shown under the finding;
screenshots of the page with them; a report without its serialized graph says how to get
one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.conftest import EXAMPLES, run_example
from tests.popvision_py.conftest import open_with_file_menu


@pytest.fixture(scope="module")
def oom16_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tutorial 4 on an IPU of 16 tiles: it does not fit (made with allowOutOfMemory)."""
    directory = tmp_path_factory.mktemp("oom16")
    options = {
        "autoReport.all": "true",
        "autoReport.directory": str(directory),
        "debug.allowOutOfMemory": "true",
    }
    env = dict(os.environ, POPLAR_ENGINE_OPTIONS=json.dumps(options))
    script = str(EXAMPLES / "tutorial4_matmul.py")
    subprocess.run(
        [sys.executable, script, "--tiles-per-ipu", "16"], env=env, capture_output=True, timeout=600
    )
    return directory / "tutorial4"


def _insights(window):
    window.show_view("Insights")
    view = window.current_view()
    assert view.title == "Insights" and not view.showing_message()
    return view


def _finding_item(view, rule: str):
    tree = view.findings.tree
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        finding = next(f for f in view.model.findings() if item.text(0).endswith(f.title))
        if finding.rule == rule:
            return item
    raise AssertionError(f"no {rule} finding")


def _try(qtbot, view, rule: str):
    item = _finding_item(view, rule)
    button = view.findings.tree.itemWidget(item, 2)
    assert button.text() == "Try it" and button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    # the engine re-plans in a worker: the window shows progress and keeps answering
    assert view.whatif.busy and button.text() == "Trying…"
    qtbot.waitUntil(lambda: not view.whatif.busy, timeout=180_000)
    return item, button


def test_try_it_shows_how_the_out_of_memory_program_would_fit(
    qtbot, window, oom16_report, monkeypatch, screenshot_dir
):
    open_with_file_menu(qtbot, window, oom16_report, monkeypatch)
    view = _insights(window)
    assert view.fit.title.text() == "Does not fit"
    view.details.setCurrentWidget(view.findings)
    item, button = _try(qtbot, view, "temporaries-at-peak")
    assert button.text() == "Tried" and not button.isEnabled()
    headline = item.child(0).text(0)
    assert headline.startswith("What-if: Predicted for setting the availableMemoryProportion of m4")
    assert "the program fits" in headline and "a run" in headline
    rows = [item.child(0).child(i).text(0) for i in range(item.child(0).childCount())]
    assert rows[0].startswith("Now: 16 tiles over")
    chosen = [r for r in rows if r.startswith("▶ ")]
    assert len(chosen) == 1 and "fits;" in chosen[0] and "cycles" in chosen[0]
    assert len(rows) >= 5  # several values tried
    assert "What-if: Predicted" in view.findings.suggestion.text()
    window.resize(1400, 1000)
    view.splitter.setSizes([330, 670])  # room for the findings and their predictions
    QApplication.processEvents()
    window.grab().save(str(screenshot_dir / "insights-whatif-fit.png"))
    # half weights, from the same page
    half_item, _ = _try(qtbot, view, "fp16-candidates")
    assert "storing 3 weights in half (m1, m2, m3)" in half_item.child(0).text(0)
    item.setExpanded(False)
    view.findings.tree.scrollToItem(half_item)
    QApplication.processEvents()
    window.grab().save(str(screenshot_dir / "insights-whatif-half.png"))


def test_try_it_on_a_report_without_its_graph_says_how_to_get_one(
    qtbot, window, tmp_path, monkeypatch
):
    options = {
        "autoReport.all": "true",
        "autoReport.outputSerializedGraph": "false",
        "autoReport.directory": str(tmp_path),
    }
    run_example("tutorial4_matmul.py", {"POPLAR_ENGINE_OPTIONS": options})
    open_with_file_menu(qtbot, window, tmp_path / "tutorial4", monkeypatch)
    view = _insights(window)
    item, _ = _try(qtbot, view, "fp16-candidates")
    text = item.child(0).text(0)
    assert text.startswith("What-if: What-if not available")
    assert "autoReport.outputSerializedGraph" in text


def test_try_it_on_a_pipeline_moves_the_bounding_stages_layers_and_says_what_each_gives(
    qtbot, window, tmp_path, monkeypatch, screenshot_dir
):
    options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    run_example(
        "pipelined_model.py", {"POPLAR_ENGINE_OPTIONS": options}, "--steps", "1",
        "--tiles-per-ipu", "64",
    )  # fmt: skip
    open_with_file_menu(qtbot, window, tmp_path / "pipelined", monkeypatch)
    view = _insights(window)
    view.details.setCurrentWidget(view.findings)
    item, _ = _try(qtbot, view, "pipeline-balance")
    headline = item.child(0).text(0)
    assert "neighbouring stage" in headline and "samples/s" in headline
    rows = [item.child(0).child(i).text(0) for i in range(item.child(0).childCount())]
    moved = [r for r in rows if " to stage " in r]
    assert len(moved) >= 2 and all("cycles" in r for r in moved)
    window.resize(1400, 1000)
    view.splitter.setSizes([330, 670])
    QApplication.processEvents()
    window.grab().save(str(screenshot_dir / "insights-whatif-pipeline.png"))
