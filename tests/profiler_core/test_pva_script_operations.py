"""Operation scripts in libpva's style (PopLiner's OperationList): operations with their
debug context's file and line, programs, variables and step range, against debug.cbor and
profiler_core's operations table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from profiler_core import pva
from profiler_core.analysis.operations import operations_table
from profiler_core.analysis.program_tree import program_tree
from profiler_core.report import open_report

TUTORIAL = Path(__file__).resolve().parents[2] / "resources" / "examples" / "tutorial4_matmul.py"


def operation_rows(report) -> list[tuple]:
    """What PopLiner reads of each operation."""
    rows = []
    for op in pva.OperationAnalysis(report).operations:
        context = op.debugContext
        rows.append(
            (
                op.name,
                context.location.fileName,
                context.location.lineNumber,
                [p._id for p in op.programs()],
                {v._id for v in op.vars},
                op.firstStepIndex,
                op.lastStepIndex,
                json.loads(context.json),
            )
        )
    return rows


def test_tutorial4_operations_name_the_matmul_lines(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    rows = operation_rows(report)
    named = {r[0]: r for r in rows}
    assert list(named)[:2] == ["m4", "m5"]  # in step order, those without steps after
    source = TUTORIAL.read_text().splitlines()
    for name in ("m4", "m5"):
        _, file_name, line, programs, _, first, last, record = named[name]
        assert Path(file_name) == TUTORIAL and f"{name} = " in source[line - 1]
        assert programs == list(range(first, last + 1)) and record["op"] == "poplin::matMul"
    assert named["m4"][3] == list(range(0, 6)) and named["m5"][3] == list(range(6, 12))
    debug = open_report(tutorial4_report).debug
    for name, file_name, line, *_ in rows:
        i = debug.name.tolist().index(name)
        assert (file_name, line) == (debug.file[i], int(debug.line[i]))


def test_operation_cycles_and_variables_equal_the_operations_table(
    pva_report_folder: Path,
) -> None:
    report = pva.openReport(pva_report_folder)
    core = open_report(pva_report_folder)
    table = operations_table(core, group_by="name")
    tree = program_tree(core)
    by_name: dict[str, list] = {}
    for op in pva.OperationAnalysis(report).operations:
        by_name.setdefault(op.name, []).append(op)
    graph = core.graph
    for name, ops in by_name.items():
        row = table.row(name)
        steps = [p._id for op in ops for p in op.programs()]
        assert int(tree.step_cycles[steps].sum()) == int(table.total_cycles[row]), name
        var = [v._id for op in ops for v in op.vars]
        assert len(var) == table.variables[row]
        assert sum(v.size for op in ops for v in op.vars) == table.variable_bytes[row]
        assert int(graph.var_bytes[var].sum()) == table.variable_bytes[row]
    # every step with a debug context belongs to exactly one operation
    owned = [p._id for op in pva.OperationAnalysis(report).operations for p in op.programs()]
    assert len(owned) == len(set(owned))
    assert set(owned) == set(np.flatnonzero(core.programs.step_debug >= 0).tolist())


def test_parents_walk_up_to_the_top_context(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    debug = open_report(pva_report_folder).debug
    for op in pva.OperationAnalysis(report).operations:
        context, chain = op.debugContext, []
        while context.parents:
            (context,) = context.parents
            chain.append(context.id)
        expected, up = [], int(debug.parent[op.debugContext.id])
        while up >= 0:
            expected.append(up)
            up = int(debug.parent[up])
        assert chain == expected
        assert op.debugContext.layer == debug.layer[op.debugContext.id]
