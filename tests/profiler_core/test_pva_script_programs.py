"""Program and execution scripts in libpva's style: the tutorial's visitor, PopLiner's
visitor collecting OnTileExecute and DoExchange programs into sets, per-step cycles and
per-IPU data, on engine-made reports, against profiler_core's analyses and popvision-cli."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from profiler_core import pva
from profiler_core.analysis.execution import cycle_breakdown
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.profiler_core.cli_json import popvision_cli


class ProgCounterVisitor(pva.ProgramVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.onTileExecutes: set = set()
        self.doExchanges: set = set()

    def visitOnTileExecute(self, onTileExecute) -> None:  # noqa: N803
        self.onTileExecutes.add(onTileExecute)

    def visitDoExchange(self, doExchange) -> None:  # noqa: N803
        self.doExchanges.add(doExchange)


class KindCounter(pva.ProgramVisitor):
    """Overrides every visit<Type>: each program lands in its own type's method."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: Counter = Counter()


for _kind in StepKind:
    setattr(
        KindCounter,
        f"visit{_kind.poplar_name}",
        lambda self, program, name=_kind.poplar_name: self.seen.update([(name, program.type.name)]),
    )


def test_visitor_collects_each_program_once_from_programs_and_steps(
    pva_report_folder: Path,
) -> None:
    report = pva.openReport(pva_report_folder)
    from_programs = ProgCounterVisitor()
    for program in report.compilation.programs:
        program.accept(from_programs)
    from_steps = ProgCounterVisitor()
    for step in report.execution.steps:
        step.program.accept(from_steps)
    kinds = open_report(pva_report_folder).programs.step_kind
    assert {p._id for p in from_programs.onTileExecutes} == set(
        np.flatnonzero(kinds == StepKind.ON_TILE_EXECUTE).tolist()
    )
    assert {p._id for p in from_programs.doExchanges} == set(
        np.flatnonzero(kinds == StepKind.DO_EXCHANGE).tolist()
    )
    # programs of executed steps are the same objects as far as sets are concerned
    assert from_steps.onTileExecutes <= from_programs.onTileExecutes
    assert from_steps.doExchanges <= from_programs.doExchanges
    step_cs = open_report(pva_report_folder).programs.step_cs
    for program in from_programs.onTileExecutes:
        assert program.computeset.id == step_cs[program._id]


def test_every_visit_method_receives_its_own_type(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    counter = KindCounter()
    for program in report.compilation.programs:
        program.accept(counter)
    assert all(method == kind for method, kind in counter.seen)
    kinds = open_report(pva_report_folder).programs.step_kind
    expected = Counter(StepKind(int(k)).poplar_name for k in kinds)
    assert Counter({m: n for (m, _), n in counter.seen.items()}) == expected


def test_tutorial_visitor_and_cycles_per_step_equal_the_cli(pva_report_folder: Path) -> None:
    report = pva.openReport(pva_report_folder)
    names = []

    class TestVisitor(pva.ProgramVisitor):
        def visitOnTileExecute(self, onTileExecute) -> None:  # noqa: N803
            names.append((onTileExecute.name, len(onTileExecute.computeset.vertices)))

    visitor = TestVisitor()
    for step in report.execution.steps:
        step.program.accept(visitor)
    assert names and all(count >= 1 for _, count in names)
    # the tutorial's sum of IPU 0's cycles, and every IPU's, per step kind
    core = open_report(pva_report_folder)
    breakdown = cycle_breakdown(core, 0)
    cli = popvision_cli("execution", pva_report_folder)
    (rows,) = [rows for key, rows in cli.items() if key.startswith("run_0_")]
    by_kind = {row["kind"]: row for row in rows}
    for ipu in range(report.compilation.target.numIPUs):
        per_kind: Counter = Counter()
        for step in report.execution.runs[0].steps:
            per_kind[step.program.type.name] += step.ipus[ipu].cycles
        assert sum(per_kind.values()) == int(breakdown.by_kind_ipu[:, ipu].sum())
        for kind, cycles in per_kind.items():
            assert by_kind[kind][f"ipu{ipu}_active_cycles"] == cycles
    durations = Counter()
    for step in report.execution.runs[0].steps:
        durations[step.program.type.name] += step.cyclesTo.max - step.cyclesFrom.max
    assert {k: row["cycles"] for k, row in by_kind.items()} == dict(durations)
    assert report.execution.totalCycles.total == cli["runs"][0]["cycles"]


def test_cycles_by_tile_of_compute_steps_equal_the_cli_tile_balance(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    for step in report.execution.steps:
        if step.program.type != pva.Program.Type.OnTileExecute:
            continue
        cli = popvision_cli(
            "execution", "--step", step.programStep, "--top", 1472, tutorial4_report
        )
        (rows,) = cli.values()
        expected = np.zeros(1472, np.int64)
        expected[[r["tile"] for r in rows]] = [r["cycles"] for r in rows]
        assert step.cyclesByTile.tolist() == expected.tolist()
        assert step.program.estimatedCyclesByTile.tolist() == expected.tolist()
        assert step.computeSets[0].estimatedCyclesByTile.tolist() == expected.tolist()
        active = step.ipus[0].activeCycles
        assert active.cyclesTo.max - active.cyclesFrom.max == expected.max()


def test_data_in_and_out_per_ipu_are_the_exchange_bytes(four_ipu_report: Path) -> None:
    report = pva.openReport(four_ipu_report)
    p = open_report(four_ipu_report).programs
    ipu_of = p.exch_tile // 1472
    moved = 0
    for step in report.execution.runs[0].steps:
        rows = p.exch_step == step.programStep
        for k in range(4):
            assert step.ipus[k].dataIn == int(p.exch_bytes_in[rows & (ipu_of == k)].sum())
            assert step.ipus[k].dataOut == int(p.exch_bytes_out[rows & (ipu_of == k)].sum())
            moved += step.ipus[k].dataIn
    assert moved > 0


def test_programs_children_code_and_vars(tutorial4_report: Path) -> None:
    report = pva.openReport(tutorial4_report)
    core = open_report(tutorial4_report)
    live = core.liveness
    for program in report.compilation.programs:
        assert program.children == []  # tutorial 4 is a flat sequence of steps
        ends = set(live.interval_var[(live.interval_first == program._id)
                                     | (live.interval_last == program._id)].tolist())  # fmt: skip
        assert {v._id for v in program.vars} == ends
        vertices = program.computeset.vertices if program.type.name == "OnTileExecute" else []
        for vertex in vertices:
            counts = vertex.countByTile
            assert counts.sum() == vertex.count and vertex.codeBytes == vertex.type.codeSize
            assert vertex.type.size == int(core.graph.vt_state_bytes[vertex.type.id])


def test_repeat_children_are_its_body(tmp_path: Path) -> None:
    """A Repeat's children are the steps of its body; the Repeat's own step is not one."""
    from tests.conftest import run_example_with_reports

    run_example_with_reports("pipelined_model.py", tmp_path)
    folder = sorted(tmp_path.rglob("profile.pop"))[0].parent
    report = pva.openReport(folder)
    core = open_report(folder).programs
    repeats = [p for p in report.compilation.programs if p.type == pva.Program.Type.Repeat]
    assert repeats
    for repeat in repeats:
        node = int(core.step_node[repeat._id])
        below = {n for n in range(len(core.node_parent)) if _under(core.node_parent, n, node)}
        expected = [s for s in range(core.num_steps)
                    if int(core.step_node[s]) in below and s != repeat._id]  # fmt: skip
        assert [c._id for c in repeat.children] == expected and expected


def _under(parent: np.ndarray, node: int, top: int) -> bool:
    while node >= 0:
        if node == top:
            return True
        node = int(parent[node])
    return False


def test_vertex_counts_by_tile_keyed_by_type_name_and_size_like_popliner(
    four_ipu_report: Path,
) -> None:
    """PopLiner keys vertex counts by (type name, type size): on the 4-IPU report the one
    codelet's size is told by the report (every tile's state / its vertices)."""
    report = pva.openReport(four_ipu_report)
    counts: dict[tuple[str, int], np.ndarray] = {}
    for program in report.compilation.programs:
        if program.type == pva.Program.Type.OnTileExecute:
            for vertex in program.computeset.vertices:
                key = (vertex.type.name, vertex.type.size)
                counts[key] = counts.get(key, 0) + vertex.countByTile
    # BinaryOp1D<ADD,float>: three vector edges (in1, in2, out), a pointer and a count each
    ((name, size),) = counts
    assert name.startswith("popops::BinaryOp1D") and size == 3 * 8
    state = [t.memory.category.vertexInstanceState.total for t in report.compilation.tiles]
    assert (counts[(name, size)] * size).tolist() == state
