"""Issue 29 point 7: compare mode lists B's rows as well as A's -- Operations (an "In" column:
A and B / only in A / only in B), Liveness variables and Insights findings (comparison tabs
whose Status says which report has each row); never "these are A's operations"."""

from __future__ import annotations

import numpy as np
import pytest

from popvision_py.viewmodels.operations import operation_label
from profiler_core.analysis.operations import operations_table
from profiler_core.insights import insights
from profiler_core.report import open_report
from tests.popvision_py.conftest import wait_loaded
from tests.popvision_py.program_reports import function_report


@pytest.fixture
def function_folder(tmp_path_factory) -> object:
    return function_report(tmp_path_factory.mktemp("function_report"))


def open_pair(qtbot, window, a, b):
    window.open_paths([a, b])
    wait_loaded(qtbot, window)
    assert len(window.opened) == 2


def numbered(names: list[str]) -> set[str]:
    """Names as matched: the n-th variable of a name is "name #n" from the second on."""
    seen: dict[str, int] = {}
    keys = set()
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        keys.add(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return keys


def column(table, header: str) -> list[str]:
    index = [c.header for c in table.columns].index(header)
    return [table.display(r, index) for r in range(len(table))]


def test_operations_list_a_and_b_with_which_report_has_each(
    qtbot, window, tutorial4_report, function_folder
):
    open_pair(qtbot, window, function_folder, tutorial4_report)
    window.show_view("Operations")
    view = window.current_view()
    group = view.control_bar.group()
    labels_a = set(operations_table(open_report(function_folder), group, None).labels)
    labels_b = set(operations_table(open_report(tutorial4_report), group, None).labels)
    assert labels_b - labels_a  # the pair has operations only B has
    table = view.model.columns
    shown = dict(zip(column(table, "Operation"), column(table, "In"), strict=True))
    expected = {
        operation_label(label): "A and B" if label in labels_a & labels_b
        else "only in A" if label in labels_a else "only in B"
        for label in labels_a | labels_b
    }  # fmt: skip
    assert shown == expected
    assert "these are" not in view.control_bar.note.text()
    assert "In says which has each operation" in view.control_bar.note.text()
    # a row only B has: its details say so instead of failing
    only_b = next(label for label in labels_b - labels_a)
    assert view.select_operation(operation_label(only_b))
    assert "only in report B" in view.operation.summary.message.text()


def test_liveness_and_insights_compare_tabs_list_b_rows_too(
    qtbot, window, tutorial4_report, function_folder
):
    open_pair(qtbot, window, function_folder, tutorial4_report)
    window.show_view("Liveness")
    tabs = window.current_view().compare_tabs
    assert "Compare: variables" in tabs.pages
    window.current_view().details.setCurrentWidget(tabs.pages["Compare: variables"])
    table = tabs.pages["Compare: variables"].model.table
    names = column(table, "Variable")
    status = dict(zip(names, column(table, "Status"), strict=True))
    graph_a, graph_b = (open_report(p).graph for p in (function_folder, tutorial4_report))
    vars_a, vars_b = (numbered([g.strings[i] for i in np.asarray(g.var_name).tolist()])
                      for g in (graph_a, graph_b))  # fmt: skip
    assert set(names) == vars_a | vars_b
    assert status["counter"] == "only in A" and status["m1"] == "only in B"
    window.show_view("Insights")
    tabs = window.current_view().compare_tabs
    window.current_view().details.setCurrentWidget(tabs.pages["Compare: findings"])
    table = tabs.pages["Compare: findings"].model.table
    keys = column(table, "Finding")
    expected = set()
    for path in (function_folder, tutorial4_report):
        for f in insights(open_report(path)).findings:
            expected.add(f"{f.severity.label} {f.rule}: {f.source.label}")
    assert set(keys) == expected and len(keys) > 0
