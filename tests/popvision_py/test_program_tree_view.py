"""The Program Tree page on tutorial 4 as a user drives it: lines equal popvision-cli's tree,
clicks write the shared selection and picks from elsewhere are expanded to, the selected
operation's steps are highlighted, search visits matches in order, missing sections."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeView

from benchmarks.synthetic_programs import deep_program
from popvision_py.app.screenshots import _save, save_screenshots
from popvision_py.viewmodels.program_tree import ProgramTreeViewModel
from popvision_py.views.program_tree.model import HIGHLIGHT_ROLE, LINE_ROLE, ProgramTreeModel
from popvision_py.views.program_tree.view import ProgramTreeView
from profiler_core.formats.profile_pop import read_profile
from profiler_core.formats.profile_pop.writer import build_message, write_message
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.popvision_py.conftest import open_with_file_menu
from tests.popvision_py.program_reports import function_report


def show_tree(window) -> ProgramTreeView:
    window.show_view("Program Tree")
    view = window.view("Program Tree")
    assert isinstance(view, ProgramTreeView)
    assert not view.showing_message(), view.message.text()
    return view


def shown_lines(view: ProgramTreeView) -> dict[int, list[str]]:
    """Every expanded line's cells, by line id, read through the model as the view does."""
    model, out = view.tree_model, {}
    stack = [model.index(r, 0) for r in range(model.rowCount())]
    while stack:
        index = stack.pop()
        line = model.data(index, LINE_ROLE)
        out[line] = [model.data(index.siblingAtColumn(c)) for c in range(5)]
        if view.tree.isExpanded(index):
            stack += [model.index(r, 0, index) for r in range(model.rowCount(index))]
    return out


def detail_rows(view: ProgramTreeView) -> dict[str, str]:
    columns = view.line_details.properties.model.table.columns
    return dict(zip(columns[0].values, columns[1].values, strict=True))


def click_line(qtbot, view: ProgramTreeView, line: int) -> None:
    index = view.tree_model.index_of_line(line)
    view.tree.scrollTo(index)
    rect = view.tree.visualRect(index)
    qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_program_tree_lines_show_the_cli_tree(opened_window, tutorial4_report):
    view = show_tree(opened_window)
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "program-tree", "--json", str(tutorial4_report)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    nodes = json.loads(result.stdout)["program_tree"]
    view.expand_all()
    shown = shown_lines(view)
    report = open_report(tutorial4_report)
    programs = report.programs
    for node in nodes:
        name, kind, executions, cycles, _ = shown[node["node"]]
        assert name == node["name"] and kind.lower() == node["kind"]
        assert executions == f"{node['executions']:,}" and cycles == f"{node['cycles']:,}"
    step_cycles = programs.step_cycles.max(axis=1)
    for step in range(programs.num_steps):
        name, kind, _, cycles, _ = shown[len(nodes) + step]
        assert kind == StepKind(int(programs.step_kind[step])).poplar_name
        assert cycles == f"{int(step_cycles[step]):,}"


def test_clicking_lines_writes_the_shared_selection(qtbot, opened_window):
    view = show_tree(opened_window)
    selection = opened_window.opened[0].selection
    view.expand_all()
    lines = view.model.lines
    click_line(qtbot, view, lines.line_of_step(4))
    assert selection.steps.tolist() == [4]
    assert detail_rows(view)["Program step"] == "4"
    assert detail_rows(view)["Kind"] == "DoExchange"
    click_line(qtbot, view, 2)  # the node m4/Reduce selects its own steps (3, 4, 5)
    assert selection.steps.tolist() == [3, 4, 5]
    assert view.current_line() == 2  # its own pick coming back does not move the tree


def test_a_step_picked_elsewhere_is_expanded_to_and_selected(opened_window):
    view = show_tree(opened_window)
    view.tree.collapseAll()
    selection = opened_window.opened[0].selection
    selection.select_step(8)
    line = view.model.lines.line_of_step(8)
    assert view.current_line() == line
    assert view.tree.isExpanded(view.tree_model.index_of_line(3))
    assert view.tree.selectionModel().isSelected(view.tree_model.index_of_line(line))
    assert view.tree.visualRect(view.tree.currentIndex()).intersects(view.tree.viewport().rect())
    assert detail_rows(view)["Name"] == "m5/Conv_1/Convolve"
    assert detail_rows(view)["Compute set"] == "m5/Conv_1/Convolve"
    chain = view.line_details.debug.model.table  # the step's context, then the matMul call
    assert [chain.display(r, 1) for r in range(len(chain))] == ["m5/Convolve", "m5"]
    assert chain.display(1, 3) == "poplin::matMul" and "tutorial4_matmul.py:" in chain.display(1, 5)


def test_the_selected_operations_steps_are_highlighted(opened_window):
    view = show_tree(opened_window)
    selection = opened_window.opened[0].selection
    selection.select_operation("m5", [6, 7, 8, 9, 10, 11], "name")
    view.expand_all()
    model = view.tree_model
    highlighted = [line for line in shown_lines(view)
                   if model.data(model.index_of_line(line), HIGHLIGHT_ROLE)]  # fmt: skip
    lines = view.model.lines
    assert sorted(highlighted) == [lines.line_of_step(s) for s in range(6, 12)]
    brush = model.data(model.index_of_line(lines.line_of_step(6)), Qt.ItemDataRole.BackgroundRole)
    assert brush is not None and brush.color().name() == view.tree_model.highlight.color().name()
    selection.select_operation("", [])
    assert not any(model.data(model.index_of_line(i), HIGHLIGHT_ROLE) for i in highlighted)


def test_search_enter_and_shift_enter_visit_matches_in_program_order(qtbot, opened_window):
    view = show_tree(opened_window)
    view.tree.collapseAll()
    box = view.control_bar.search
    qtbot.keyClicks(box, "reduce")
    assert view.control_bar.matches.text() == "0 of 6"
    visited = []
    for _ in range(7):
        qtbot.keyClick(box, Qt.Key.Key_Return)
        visited.append(view.current_line())
    lines = view.model.lines
    # the m4/Reduce node, its ExchangePre and OnTileExecute steps, then m5's; then round
    step = lines.line_of_step
    assert visited == [2, step(4), step(5), 4, step(10), step(11), 2]
    assert view.tree.isExpanded(view.tree_model.index_of_line(4))
    assert view.control_bar.matches.text() == "1 of 6"
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert view.current_line() == step(11)
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert view.current_line() == step(10)
    qtbot.mouseClick(view.control_bar.previous, Qt.MouseButton.LeftButton)
    assert view.current_line() == 4
    assert opened_window.opened[0].selection.steps.tolist() == [9, 10, 11]
    qtbot.mouseClick(view.control_bar.next, Qt.MouseButton.LeftButton)
    assert opened_window.opened[0].selection.steps.tolist() == [10]


def test_a_ten_thousand_level_tree_reveals_its_deepest_step(qtbot):
    tree, kinds, names, strings = deep_program(10_001)
    model = ProgramTreeModel(ProgramTreeViewModel(tree, kinds, names, strings))
    view = QTreeView()
    qtbot.addWidget(view)
    view.setUniformRowHeights(True)
    view.setModel(model)
    view.resize(600, 400)
    view.show()
    deepest = model.lines.line_of_step(10_003)
    for up in model.lines.ancestors(deepest):
        view.expand(model.index_of_line(up))
    view.setCurrentIndex(model.index_of_line(deepest))
    assert model.data(view.currentIndex()) == "deepest/Convolve"
    assert model.parent(view.currentIndex()).internalId() == 10_001


def without_execution(source: Path, folder: Path) -> Path:
    folder.mkdir()
    profile = read_profile(source / "profile.pop")
    profile.execution = None
    write_message(folder / "profile.pop", build_message(profile))
    return folder


def test_a_report_that_never_ran_shows_its_structure_and_says_not_run(
    qtbot, window, tutorial4_report, tmp_path, monkeypatch
):
    folder = without_execution(tutorial4_report, tmp_path / "tutorial4")  # no debug.cbor either
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    view = show_tree(window)
    view.expand_all()
    shown = shown_lines(view)
    assert shown[1][0] == "m4/Conv_1/Convolve" and shown[1][3] == "not run"
    assert "autoReport.outputExecutionProfile" in view.control_bar.note.text()
    window.opened[0].selection.select_step(2)
    assert "autoReport.outputDebugInfo" in view.line_details.debug.message.text()
    assert view.line_details.debug.currentWidget() is view.line_details.debug.message


def test_a_damaged_program_section_is_named(qtbot, window, tutorial4_report, tmp_path, monkeypatch):
    folder = tmp_path / "damaged"
    folder.mkdir()
    message = build_message(read_profile(tutorial4_report / "profile.pop"))
    message.programs.stepNode.dtype = ">i8"
    write_message(folder / "profile.pop", message)
    shutil.copy(tutorial4_report / "debug.cbor", folder / "debug.cbor")
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    window.show_view("Program Tree")
    view = window.view("Program Tree")
    assert view.showing_message() and "program tree section" in view.message.text()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_program_tree_screenshot_with_a_selected_step(opened_window, screenshot_dir, theme):
    opened_window.set_theme(theme)
    view = show_tree(opened_window)
    opened_window.opened[0].selection.select_operation("m5", [6, 7, 8, 9, 10, 11], "name")
    view.expand_all()
    opened_window.opened[0].selection.select_step(2)
    view.details.setCurrentIndex(1)
    path = _save(opened_window, screenshot_dir, f"program-tree-selected-{theme}")
    assert path.stat().st_size > 0
    image = view.tree.grab().toImage()
    rect = view.tree.visualRect(view.tree_model.index_of_line(view.model.lines.line_of_step(7)))
    colour = image.pixelColor(rect.right() - 4, rect.center().y())
    assert colour.name() == view.tree_model.highlight.color().name()
    assert np.array_equal(opened_window.opened[0].selection.steps, [2])


def test_save_screenshots_shows_a_selected_operation_and_step_in_both_themes(
    opened_window, screenshot_dir
):
    saved = save_screenshots(opened_window, screenshot_dir, prefix="program-views")
    names = {path.name for path in saved}
    for theme in ("", "dark-"):
        assert f"program-views-{theme}operations-selected.png" in names
        assert f"program-views-{theme}program-tree-selected.png" in names
    selection = opened_window.opened[0].selection
    assert selection.operation == "poplin::matMul"  # the most expensive op, row 0
    assert selection.steps.tolist() == [int(selection.operation_steps[0])]
    tree = opened_window.view("Program Tree")
    assert tree.current_line() == tree.model.lines.line_of_step(selection.step)


@pytest.fixture(scope="module")
def called_function_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return function_report(tmp_path_factory.mktemp("functions"))


def test_functions_have_their_own_section_and_runs_are_counted_one_at_a_time(
    qtbot, window, called_function_report, monkeypatch
):
    open_with_file_menu(qtbot, window, called_function_report, monkeypatch)
    view = show_tree(window)
    report = open_report(called_function_report)
    programs = report.programs
    bar = view.control_bar.sections
    assert bar.isTabEnabled(1)
    model = view.tree_model
    tops = [model.data(model.index(r, 0)) for r in range(model.rowCount())]
    assert tops == [report.strings[int(programs.node_name[r])] for r in programs.roots.tolist()]
    # the Sequence of program 0 calls the function twice: its two Call steps, though the
    # function's body was lowered between them
    calls = [s for s in range(programs.num_steps) if programs.step_kind[s] == StepKind.CALL]
    seq = int(programs.roots[0])
    mine = [s for s in calls if programs.node_parent[programs.step_node[s]] == seq]
    view.expand_all()
    click_line(qtbot, view, seq)
    assert window.opened[0].selection.steps.tolist() == mine and len(mine) == 2
    body = [
        s for s in range(programs.num_steps) if programs.step_kind[s] == StepKind.ON_TILE_EXECUTE
    ]
    window.opened[0].selection.select_step(body[1])  # picked elsewhere: Functions shows it
    assert bar.currentIndex() == 1
    assert view.current_line() == view.model.lines.line_of_step(body[1])
    assert model.data(model.index(0, 1)) == "Function"
    # run 0 executes the body four times, run 1 twice
    runs = report.execution.runs
    executed = [int(np.count_nonzero(r.step_ids == body[1])) for r in runs]
    current = view.tree_model.index_of_line(view.model.lines.line_of_step(body[1]), 2)
    assert view.tree_model.data(current) == f"{executed[0]:,}"
    window.opened[0].selection.select_run(1)
    view.reveal(view.model.lines.line_of_step(body[1]))
    current = view.tree_model.index_of_line(view.model.lines.line_of_step(body[1]), 2)
    assert view.tree_model.data(current) == f"{executed[1]:,}" != f"{executed[0]:,}"
    operations = window.view("Operations")
    assert (
        operations.control_bar.run.currentIndex() == 1 and operations.control_bar.run.count() == 2
    )
