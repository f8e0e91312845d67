"""Program Tree and Operations on big inputs: a synthetic program of 1.3M lines (1M
program steps) expanded (capped) and searched in a real QTreeView, and 10,000 operations
sorted. Run: ``python -m benchmarks.bench_program_views``."""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QTreeView

from benchmarks._timing import median_seconds, report
from benchmarks.synthetic_programs import operations, wide_program
from popvision_py.viewmodels.operations import operations_column_table
from popvision_py.viewmodels.program_tree import ProgramTreeViewModel
from popvision_py.views.program_tree.model import ProgramTreeModel
from popvision_py.views.program_tree.view import EXPAND_BUDGET, expand_lines


def main() -> None:
    app = QApplication.instance() or QApplication([])
    tree, kinds, names, strings = wide_program(4000, 83)
    t0 = time.perf_counter()
    model = ProgramTreeViewModel(tree, kinds, names, strings)
    build = time.perf_counter() - t0
    lines = model.lines
    print(f"program: {lines.num_nodes:,} nodes, {lines.num_steps:,} steps, {len(lines):,} lines")
    report("Program Tree view model from the tree arrays", build * 1e3, "ms", "(once)", True)

    qt_model = ProgramTreeModel(model)
    view = QTreeView()
    view.setUniformRowHeights(True)
    view.setModel(qt_model)
    view.resize(1200, 700)
    view.show()
    app.processEvents()

    def expand_all() -> None:
        view.collapseAll()
        plan, _, _ = lines.expand_plan(0, EXPAND_BUDGET)
        expand_lines(view, qt_model, plan)
        app.processEvents()  # the layout and the paint of what is shown

    seconds = median_seconds(expand_all, repeat=5)
    report(
        f"Expand all (capped at {EXPAND_BUDGET:,} lines) + paint",
        seconds * 1e3,
        "ms",
        "<= 200 ms",
        seconds <= 0.2,
    )

    model._search_blob = None
    t0 = time.perf_counter()
    found = model.search("op12")
    first = time.perf_counter() - t0
    report(
        f"Search 'op12' ({found:,} matches), first search",
        first * 1e3,
        "ms",
        "<= 200 ms",
        first <= 0.2,
    )
    seconds = median_seconds(lambda: model.search("layer7/op"), repeat=5)
    report("Search 'layer7/op', later searches", seconds * 1e3, "ms", "<= 200 ms", seconds <= 0.2)

    def go_to_next() -> None:
        line = model.next_match()
        expand_lines(view, qt_model, lines.ancestors(line))
        view.setCurrentIndex(qt_model.index_of_line(line))
        view.scrollTo(view.currentIndex())
        app.processEvents()

    view.collapseAll()
    seconds = median_seconds(go_to_next, repeat=9)
    report(
        "Next match: expand to it, select, scroll, paint",
        seconds * 1e3,
        "ms",
        "<= 200 ms",
        seconds <= 0.2,
    )

    table = operations_column_table(operations(10_000))
    seconds = median_seconds(lambda: table.sort(1, descending=True), repeat=9)
    report(
        "Operations: sort 10,000 by total cycles", seconds * 1e3, "ms", "<= 50 ms", seconds <= 0.05
    )
    seconds = median_seconds(lambda: table.sort(0), repeat=9)
    report("Operations: sort 10,000 by name", seconds * 1e3, "ms", "<= 50 ms", seconds <= 0.05)
    view.close()


if __name__ == "__main__":
    main()
