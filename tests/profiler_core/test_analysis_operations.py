"""Operations: cycles by class, vertices, code, memory and FLOPs per op, layer, operation name
or context, recounted here with plain loops over the factory's runs and columns."""

from __future__ import annotations

from collections import defaultdict

import pytest

from profiler_core.analysis.debug_groups import operation_contexts
from profiler_core.analysis.operations import operations_table
from profiler_core.errors import ReportError
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report

CLASS = {StepKind.ON_TILE_EXECUTE: "compute", StepKind.DO_EXCHANGE: "exchange"}
CLASS |= {StepKind.GLOBAL_EXCHANGE: "exchange", StepKind.SYNC: "sync"}


def label(debug, column, context):
    return getattr(debug, column)[context] if context >= 0 else ""


@pytest.mark.parametrize("group_by", ["op", "layer", "context"])
def test_cycles_by_class_follow_each_executed_step_to_its_context(report, group_by):
    profile, debug = report
    column = "name" if group_by == "context" else group_by
    p = profile.programs
    expected = defaultdict(lambda: defaultdict(int))
    for run in profile.execution.runs:
        for step in run.step_ids.tolist():
            key = label(debug, column, int(p.step_debug[step]))
            cls = CLASS.get(StepKind(int(p.step_kind[step])), "other")
            expected[key][cls] += int(p.step_cycles[step].max())
    table = operations_table(profile, group_by, debug=debug)
    for key, by_class in expected.items():
        row = table.row(key)
        assert table.compute_cycles[row] == by_class["compute"]
        assert table.exchange_cycles[row] == by_class["exchange"]
        assert table.sync_cycles[row] == by_class["sync"]
        assert table.other_cycles[row] == by_class["other"]
    total = sum(r.total_cycles for r in profile.execution.runs)
    assert table.total_cycles.sum() == total
    assert (table.total_cycles[:-1] >= table.total_cycles[1:]).all()  # most cycles first


def test_vertices_code_flops_and_memory_per_op(report):
    profile, debug = report
    g = profile.graph
    vertices, flops, code, memory, types = (defaultdict(int) for _ in range(5))
    code_on, type_of = set(), set()
    for cs, vt, tile, count, f in zip(
        g.vc_cs.tolist(), g.vc_type.tolist(), g.vc_tile.tolist(), g.vc_count.tolist(),
        g.vc_flops.tolist(), strict=True,
    ):  # fmt: skip
        op = label(debug, "op", int(g.cs_debug[cs]))
        vertices[op] += count
        flops[op] += f
        if (op, vt, tile) not in code_on:
            code_on.add((op, vt, tile))
            code[op] += int(g.vt_code_bytes[vt])
        if (op, vt) not in type_of:
            type_of.add((op, vt))
            types[op] += 1
    for var, size in enumerate(g.var_bytes.tolist()):
        memory[label(debug, "op", int(g.var_debug[var]))] += size
    table = operations_table(profile, "op", debug=debug)
    for i, op in enumerate(table.labels):
        assert table.vertices[i] == vertices[op]
        assert table.flops[i] == flops[op]
        assert table.code_bytes[i] == code[op]
        assert table.vertex_types[i] == types[op]
        assert table.variable_bytes[i] == memory[op]


def test_one_run_counts_only_its_steps(report):
    profile, debug = report
    host = operations_table(profile, "op", run=0, debug=debug)
    assert host.total_cycles.sum() == profile.execution.runs[0].total_cycles
    assert host.step_executions.sum() == len(profile.execution.runs[0].step_ids)


def test_tutorial4_by_name_has_one_row_per_matmul(tutorial4_report):
    report = open_report(tutorial4_report)
    table = operations_table(report, "name")
    assert table.labels[:2] == ["m4", "m5"]
    names = report.graph.strings
    p = report.programs
    for op in ("m4", "m5"):
        row = table.row(op)
        nodes = {n for n in range(len(p.node_name)) if names[int(p.node_name[n])].startswith(op)}
        steps = [s for s in range(p.num_steps) if int(p.step_node[s]) in nodes]
        assert len(steps) == 6
        expected = sum(int(p.step_cycles[s].max()) for s in steps)
        assert table.total_cycles[row] == expected
        # one Sync before each of its two executes, each 124 cycles plus the IPU Model's
        # default relative sync delay of 150 (ipu_engine/poplar/cost_model/constants.py)
        assert table.sync_cycles[row] == 2 * (124 + 150)
        assert table.compute_sets[row] == 2  # Convolve and Reduce
    # m4 = m1 @ m2: 900 x 300 floats; its partials are the op's other variable
    assert table.variable_bytes[table.row("m4")] >= 900 * 300 * 4
    assert table.variables[table.row("m1")] == 1
    assert table.variable_bytes[table.row("m1")] == 900 * 600 * 4
    by_op = operations_table(report, "op")
    assert by_op.vertices[by_op.row("poplin::matMul")] == table.vertices.sum()


def test_operation_contexts_stop_at_the_op_call(report):
    _, debug = report
    debug.api[5] = debug.op[5]  # context 5 is an op call now
    owner = operation_contexts(debug)
    for child in range(len(debug)):
        chain, at = [], child
        while at >= 0:
            chain.append(at)
            if debug.op[at] and debug.api[at] == debug.op[at]:
                break
            at = int(debug.parent[at])
        top = chain[-1]
        expected = top if debug.op[top] and debug.api[top] == debug.op[top] else child
        assert owner[child] == expected


def test_a_damaged_or_mismatched_debug_file_is_named(report):
    profile, debug = report
    profile.graph.var_debug[0] = 50
    with pytest.raises(ReportError, match="'var_debug' refers to debug context 50"):
        operations_table(profile, debug=debug)
    with pytest.raises(ValueError, match="group_by must be one of"):
        operations_table(profile, "vertex")
