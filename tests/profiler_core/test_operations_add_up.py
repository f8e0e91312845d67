"""The Operations figures add up (issue 38): over real reports made with the engine -- the
tutorials, a pipelined, a sharded, a replicated and a training model, and a ResNet-like ONNX
model -- every grouping's cycles sum to the runs' total, each operation's phases sum to its
total, memory columns agree with Liveness and Memory, and the pipeline's time steps no
longer swallow the ops that ran inside them. Expected values are recounted here with plain
loops over the report's columns."""

from __future__ import annotations

import re
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from profiler_core.analysis.debug_groups import GROUPINGS
from profiler_core.analysis.operations import operations_table
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.conftest import run_example_with_reports
from tests.operations_invariants import check_cycles_add_up, check_memory_columns, step_cycles
from tests.operations_reports import no_debug_contexts

EXAMPLES = {
    "engine": ("tutorial1_variables.py",),
    "tutorial2": ("tutorial2_popops.py",),
    "four_shards": ("four_shards.py",),
    "replicated": ("replicated_model.py", "--steps", "1", "--micro-batch-size", "4"),
    "training": ("mlp_training.py", "--epochs", "1", "--samples", "128"),
}
PHASES = ("pipeline::rampUp", "pipeline::steadyState", "pipeline::rampDown")


@pytest.fixture(scope="module")
def folders(tmp_path_factory, tutorial4_report, pipelined_folder, resnet_onnx_folder):
    directory = tmp_path_factory.mktemp("add_up")
    found = {"tutorial4": tutorial4_report}
    for name, (script, *args) in EXAMPLES.items():
        run_example_with_reports(script, directory / name, *args)
        (found[name],) = [p for p in (directory / name).iterdir() if p.is_dir()]
    found["pipelined"] = pipelined_folder
    found["resnet_onnx"] = resnet_onnx_folder
    return found


@pytest.fixture(scope="module")
def reports(folders):
    return {name: open_report(path) for name, path in folders.items()}


REPORTS = [*EXAMPLES, "tutorial4", "pipelined", "resnet_onnx"]


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("group_by", [*GROUPINGS, "phase"])
def test_every_grouping_sums_to_the_runs_and_each_row_to_its_total(reports, name, group_by):
    check_cycles_add_up(reports[name], group_by)


def test_the_pipelined_matmul_holds_its_cycles_and_flops(reports):
    report = reports["pipelined"]
    table = operations_table(report, "op")
    assert not [label for label in table.labels if label.startswith("pipeline::")]
    row = table.row("poplin::matMul")
    assert table.compute_cycles[row] > 0 and table.exchange_cycles[row] > 0
    # every matmul codelet's FLOPs are the op's: found by vertex type and the debug contexts
    # of the vertex-count rows, walking up to the op call
    g, debug, names = report.graph, report.debug, report.strings
    by_type = 0
    for vtype, ctx, flops in zip(g.vc_type.tolist(), g.vc_debug.tolist(), g.vc_flops.tolist(),
                                 strict=True):  # fmt: skip
        if names[int(g.vt_name[vtype])].startswith("poplin::"):
            assert debug.op[ctx] == "poplin::matMul"
            by_type += flops
    assert by_type > 0 and table.flops[row] >= by_type
    assert table.flops.sum() == g.vc_flops.sum()


def test_each_layer_of_the_pipelined_model_holds_its_cycles(reports):
    table = operations_table(reports["pipelined"], "layer")
    for layer in ("linear0", "relu1", "linear2", "relu3", "linear4", "relu5", "linear6"):
        assert table.compute_cycles[table.row(layer)] > 0, layer
    # the pipeline's own layer is the copies between its stages: no op's vertices
    assert table.vertices[table.row("pipeline")] == 0


TIME_STEP = re.compile(r"^(rampUp|steadyState|rampDown)\d*$")


def phase_by_tree(report) -> list[str]:
    """The pipeline phase each step runs in: the time step node above it in the program tree
    (found by its name), "" for steps outside the pipeline."""
    p, names = report.programs, report.strings
    phase_of_node: list[str] = []
    for node, parent in enumerate(p.node_parent.tolist()):
        phase = phase_of_node[parent] if parent >= 0 else ""
        match = TIME_STEP.match(names[int(p.node_name[node])])
        if not phase and match:
            phase = f"pipeline::{match.group(1)}"
        phase_of_node.append(phase)
    return [phase_of_node[int(n)] for n in p.step_node]


def test_the_phases_hold_the_cycles_of_their_time_steps(reports):
    report = reports["pipelined"]
    by_phase = operations_table(report, "phase")
    cycles, phases = step_cycles(report), phase_by_tree(report)
    for phase in PHASES:
        expected = sum(int(c) for c, p in zip(cycles, phases, strict=True) if p == phase)
        assert expected > 0 and by_phase.total_cycles[by_phase.row(phase)] == expected, phase
    by_op = operations_table(report, "op")
    row, steady = by_op.row("poplin::matMul"), by_op.phase_labels.index("pipeline::steadyState")
    assert 0 < by_op.phase_cycles[row, steady] < by_op.total_cycles[row]
    for k, phase in enumerate(by_op.phase_labels):  # the phase columns are the phase rows
        if phase:
            assert by_op.phase_cycles[:, k].sum() == by_phase.total_cycles[by_phase.row(phase)]


def split_by_hand(report, column: str) -> dict[str, Fraction]:
    """Each ``column`` label's cycles by the documented rule, with plain loops and exact
    fractions: a step of an Execute whose compute set holds vertices of several debug
    contexts is shared among them in proportion to each one's busiest tile (a tile's compute
    cycles divided among the contexts by their vertices on it); any other step, and every
    step of a compute set with one context, is its own context's."""
    p, g, debug = report.programs, report.graph, report.debug
    vc_debug = getattr(g, "vc_debug", None)  # None in reports written before it
    vertex_context = vc_debug if vc_debug is not None else g.cs_debug[g.vc_cs]
    on_tile: dict[tuple[int, int], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for cs, tile, ctx, count in zip(g.vc_cs.tolist(), g.vc_tile.tolist(),
                                    vertex_context.tolist(), g.vc_count.tolist(), strict=True):  # fmt: skip
        on_tile[(cs, tile)][ctx] += count
    tile_cycles = dict(zip(zip(p.cst_cs.tolist(), p.cst_tile.tolist(), strict=True),
                           p.cst_cycles.tolist(), strict=True))  # fmt: skip
    busiest: dict[int, dict[int, Fraction]] = defaultdict(dict)
    vertices: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for (cs, tile), counts in on_tile.items():
        everyone = sum(counts.values())
        for ctx, count in counts.items():
            share = Fraction(tile_cycles.get((cs, tile), 0) * count, everyone)
            busiest[cs][ctx] = max(busiest[cs].get(ctx, Fraction(0)), share)
            vertices[cs][ctx] += count
    execute_cs = {int(p.step_node[s]): int(p.step_cs[s]) for s in range(p.num_steps)
                  if p.step_cs[s] >= 0}  # fmt: skip
    out: dict[str, Fraction] = defaultdict(Fraction)
    for step, cycles in enumerate(step_cycles(report).tolist()):
        ctx = int(p.step_debug[step])
        cs = execute_cs.get(int(p.step_node[step]), -1)
        weights: dict[int, Fraction] = {ctx: Fraction(1)}
        if cs >= 0 and ctx == int(g.cs_debug[cs]) and cs in busiest:
            weights = busiest[cs]
            if not sum(weights.values()):  # no compute cycles recorded: by vertices
                weights = {c: Fraction(n) for c, n in vertices[cs].items()}
        total = sum(weights.values())
        for owner, weight in weights.items():
            phase_only = owner >= 0 and debug.api[owner].startswith("pipeline::")
            label = getattr(debug, column)[owner] if owner >= 0 and not phase_only else ""
            out[label] += cycles * weight / total
    return out


def test_the_shared_steps_are_split_as_a_hand_count_splits_them(reports):
    report = reports["pipelined"]
    expected = split_by_hand(report, "layer")
    table = operations_table(report, "layer")
    split_steps = report.programs.num_steps  # each split step rounds by under a cycle
    assert sum(expected.values()) == table.total_cycles.sum()
    for label, cycles in expected.items():
        assert abs(int(table.total_cycles[table.row(label)]) - cycles) < split_steps, label


@pytest.mark.parametrize("name", REPORTS)
@pytest.mark.parametrize("group_by", ["op", "name", "layer"])
def test_memory_columns_agree_with_liveness_and_memory(reports, name, group_by):
    check_memory_columns(reports[name], group_by)


def outermost_call(debug, context: int) -> int:
    """The outermost library or framework op call at or above ``context`` (else itself)."""
    found, at = context, context
    while at >= 0:
        if debug.op[at] and debug.api[at] == debug.op[at]:
            found = at
        at = int(debug.parent[at])
    return found


def code_sharers_by_hand(report) -> dict[tuple[int, int], set[str]]:
    """The framework ops (ONNX nodes) whose vertices run each (vertex type, tile)."""
    g, debug = report.graph, report.debug
    vc_debug = getattr(g, "vc_debug", None)  # None in reports written before it
    vertex_context = vc_debug if vc_debug is not None else g.cs_debug[g.vc_cs]
    users: dict[tuple[int, int], set[str]] = defaultdict(set)
    for vtype, tile, ctx in zip(g.vc_type.tolist(), g.vc_tile.tolist(),
                                vertex_context.tolist(), strict=True):  # fmt: skip
        users[(vtype, tile)].add(debug.name[outermost_call(debug, ctx)] if ctx >= 0 else "")
    return users


def test_shared_code_is_counted_once_with_the_ops_that_share_it(reports):
    """The ONNX model's convolutions run the same codelets on the same tiles: by ONNX node,
    that code is shared, and is counted once."""
    report = reports["resnet_onnx"]
    table = operations_table(report, "framework")
    users = code_sharers_by_hand(report)
    code = report.graph.vt_code_bytes
    own, shared, sets = defaultdict(int), 0, defaultdict(int)
    for (vtype, _tile), sharers in users.items():
        if len(sharers) == 1:
            own[next(iter(sharers))] += int(code[vtype])
        else:
            shared += int(code[vtype])
            sets[frozenset(sharers)] += int(code[vtype])
    assert shared > 0 and table.shared_code_bytes == shared
    for i, label in enumerate(table.labels):
        assert table.own_code_bytes[i] == own[label], label
    sharing = table.code_sharing
    found = {frozenset(m): b for m, b in zip(sharing.members, sharing.bytes, strict=True)}
    assert found == dict(sets)


def test_a_report_without_debug_contexts_counts_everything_as_none_and_says_so(folders, tmp_path):
    report = open_report(no_debug_contexts(folders["pipelined"], tmp_path / "pipelined"))
    for group_by in ("op", "phase"):
        table = operations_table(report, group_by)
        assert table.labels == [""]
        assert int(table.total_cycles[0]) == int(step_cycles(report).sum())
        assert any("no debug contexts" in note for note in table.notes)


def test_operations_without_cycles_are_counted_and_said(reports):
    table = operations_table(reports["tutorial4"], "name")
    idle = int(np.count_nonzero(table.total_cycles == 0))
    assert idle > 0  # m1, m2, m3: variables only
    assert f"{idle} operations ran no steps" in " ".join(table.notes)


def test_the_stream_copies_stay_with_the_feeds(reports):
    report = reports["training"]
    table = operations_table(report, "op")
    p = report.programs
    streams = {StepKind.STREAM_COPY_BEGIN, StepKind.STREAM_COPY_MID, StepKind.STREAM_COPY_END}
    cycles = step_cycles(report)
    streamed = sum(int(cycles[s]) for s in range(p.num_steps) if p.step_kind[s] in streams)
    feeds = sum(int(table.total_cycles[table.row(op)]) for op in ("host::infeed", "host::outfeed"))
    assert streamed > 0 and feeds >= streamed
