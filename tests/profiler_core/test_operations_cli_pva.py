"""popvision-cli operations and the pva-style API give the Operations figures (issue 38): on
the pipelined example and the ResNet-like ONNX model, the CLI's JSON equals the analysis
column for column, phases and totals included, and pva's operations add up to the table by
name, a step several ops shared belonging to each of them."""

from __future__ import annotations

from collections import defaultdict

import pytest

from profiler_core import pva
from profiler_core.analysis.operations import operations_table
from profiler_core.cli.operations_command import phase_column
from profiler_core.report import open_report
from tests.profiler_core.cli_json import popvision_cli

COLUMNS = ("total_cycles", "compute_cycles", "exchange_cycles", "sync_cycles", "other_cycles",
           "step_executions", "compute_sets", "vertices", "vertex_types", "code_bytes",
           "own_code_bytes", "variables", "variable_bytes", "live_at_peak_bytes", "flops")  # fmt: skip


@pytest.mark.parametrize("folder", ["pipelined_folder", "resnet_onnx_folder"])
@pytest.mark.parametrize("group_by", ["op", "layer", "phase"])
def test_the_cli_json_is_the_analysis(request, folder, group_by):
    path = request.getfixturevalue(folder)
    table = operations_table(open_report(path), group_by)
    out = popvision_cli("operations", "--group-by", group_by, path)
    records = out[f"operations_by_{group_by}"]
    none = "(no phase)" if group_by == "phase" else "(none)"
    assert [r[group_by] for r in records] == [label or none for label in table.labels]
    for name in COLUMNS:
        assert [r[name] for r in records] == getattr(table, name).tolist(), name
    if group_by != "phase" and table.phase_labels != [""]:
        for k, phase in enumerate(table.phase_labels):
            assert [r[phase_column(phase)] for r in records] == table.phase_cycles[:, k].tolist()
    shared = out["shared_code"]
    assert [r["bytes"] for r in shared] == table.code_sharing.bytes.tolist()
    totals = {r["figure"]: r for r in out["totals"]}
    assert totals["cycles"]["operations"] == totals["cycles"]["elsewhere"]
    code = totals["vertex code: own + shared once"]
    assert code["operations"] == code["elsewhere"] > 0
    assert out["notes"] == list(table.notes)


def test_pva_operations_add_up_to_the_table_by_name(pipelined_folder):
    report = pva.openReport(pipelined_folder)
    table = operations_table(open_report(pipelined_folder), "name")
    by_name: dict[str, int] = defaultdict(int)
    phases: dict[str, int] = defaultdict(int)
    operations = list(pva.OperationAnalysis(report).operations)
    for op in operations:
        by_name[op.name] += op.cycles
        assert sum(op.cyclesByPhase.values()) == op.cycles
        for phase, cycles in op.cyclesByPhase.items():
            phases[phase] += cycles
    for name, cycles in by_name.items():
        assert cycles == table.total_cycles[table.row(name)], name
    assert phases["pipeline::steadyState"] > 0
    # a step whose compute set ran several ops' vertices is a program of each of them
    owners: dict[int, int] = defaultdict(int)
    for op in operations:
        for program in op.programs():
            owners[program._id] += 1
    assert max(owners.values()) > 1
    matmuls = [op for op in operations if op.debugContext.op == "poplin::matMul"]
    assert matmuls and all(op.cycles > 0 for op in matmuls)
