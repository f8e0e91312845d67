"""Framework programs speak in operations: the feeds, the copies between IPUs and the gradient
all-reduce are operations of their own, so no "(none)" row holds more than 5% of the cycles of
the bundled framework examples; the pipeline's ramp-up / steady state / ramp-down are the
phases the ops ran in, not operations (tests/profiler_core/test_operations_add_up.py)."""

import numpy as np
import pytest

from profiler_core.analysis.operations import operations_table
from profiler_core.model.kinds import StepKind
from profiler_core.report.open import open_report
from tests.conftest import run_example_with_reports

EXAMPLES = {
    "pipelined": ("pipelined_model.py", "--steps", "1"),
    "training": ("mlp_training.py", "--epochs", "1", "--samples", "256"),
    "four_shards": ("four_shards.py",),
    "replicated": ("replicated_model.py", "--steps", "1"),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    directory = tmp_path_factory.mktemp("framework_reports")
    for script, *args in EXAMPLES.values():
        run_example_with_reports(script, directory, *args)
    return {name: open_report(directory / name) for name in EXAMPLES}


def executed_step_cycles(report) -> np.ndarray:
    programs = report.programs
    executions = np.zeros(programs.num_steps, dtype=np.int64)
    for run in report.execution.runs:
        executions += np.bincount(run.step_ids, minlength=programs.num_steps)
    return executions * programs.step_cycles.max(axis=1)


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_no_operation_without_an_op_holds_more_than_5_percent_of_the_cycles(reports, name):
    table = operations_table(reports[name], "op")
    total = executed_step_cycles(reports[name]).sum()
    assert table.total_cycles.sum() == total > 0
    none = table.total_cycles[table.row("")] if "" in table.labels else 0
    assert none <= 0.05 * total, f"{name}: (none) holds {none / total:.1%} of the cycles"


@pytest.mark.parametrize("name", ["training", "four_shards", "replicated"])
def test_the_feeds_are_operations_of_their_own(reports, name):
    table = operations_table(reports[name], "op")
    report = reports[name]
    programs = report.programs
    stream_kinds = {StepKind.STREAM_COPY_BEGIN, StepKind.STREAM_COPY_MID, StepKind.STREAM_COPY_END}
    cycles = executed_step_cycles(report)
    streamed = sum(
        int(cycles[s]) for s in range(programs.num_steps) if programs.step_kind[s] in stream_kinds
    )
    feeds = sum(int(table.total_cycles[table.row(op)]) for op in ("host::infeed", "host::outfeed"))
    assert streamed > 0 and feeds >= streamed  # every stream copy (and its host sync) is a feed's


def test_the_gradient_all_reduce_is_an_operation_of_its_own(reports):
    table = operations_table(reports["replicated"], "op")
    row = table.row("gcl::allReduce")
    assert table.exchange_cycles[row] > 0 and table.sync_cycles[row] > 0


def test_the_pipeline_phases_are_phases_not_operations(reports):
    """Their cycles are counted in tests/profiler_core/test_operations_add_up.py."""
    report = reports["pipelined"]
    by_op = operations_table(report, "op")
    by_phase = operations_table(report, "phase")
    for phase in ("rampUp", "steadyState", "rampDown"):
        assert f"pipeline::{phase}" not in by_op.labels  # the ops inside hold the cycles
        assert by_phase.total_cycles[by_phase.row(f"pipeline::{phase}")] > 0
    by_layer = operations_table(report, "layer")
    assert by_layer.compute_cycles[by_layer.row("linear0")] > 0
