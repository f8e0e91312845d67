"""Issue 41's what-if "weights in half" on a pipelined training program: a weight the
change makes half stays half where the backward pass reads it in float (it is cast up
there), so the program plans, its weights take half the bytes and its weight updates are
in half. Before, the backward pass's transpose turned the weight back to float and the
change could not be planned ("'stage1/recv/relu' is HALF but 'linear2.weight' is FLOAT")."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine.common.types import HALF
from ipu_engine.replan import Change, predict
from ipu_engine.replan.framework_changes import apply_framework_change
from ipu_engine.replan.framework_replay import decode_trace
from profiler_core.formats.serialized_graph import GRAPH_FILE, read_serialized_graph
from tests.conftest import run_example_with_reports


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pipelined")
    run_example_with_reports("pipelined_model.py", directory)
    graph = read_serialized_graph(directory / "pipelined" / GRAPH_FILE)
    weights = tuple(str(k) for k, _ in graph.record["trace"]["params"])
    return graph.record, graph.arrays, Change("", "type", "half", weights)


def test_every_weight_made_half_stays_half_after_the_backward_pass_reads_it(recorded):
    record, arrays, half = recorded
    trace = decode_trace(record, arrays)
    assert record.get("training") is not None and len(trace.params) == 8
    apply_framework_change(trace, half)
    assert {name: node.type for name, node in trace.params.items()} == {
        name: HALF for name in trace.params
    }
    # where a float op reads a half weight, it reads it through a cast
    readers = [n for n in trace.nodes if any(i.op == "param" for i in n.inputs)]
    for node in readers:
        for weight in (i for i in node.inputs if i.op == "param"):
            assert node.type == HALF or node.op == "cast", (node.op, node.name, weight.name)


def test_the_pipelined_training_program_plans_with_its_weights_in_half(recorded):
    record, arrays, half = recorded
    before = predict(record, arrays, None, [0])
    after = predict(record, arrays, half, [0])
    assert after.fits and after.total_cycles > 0
    elements = sum(int(np.prod(n.shape)) for n in decode_trace(record, arrays).params.values())
    # each weight and its gradient accumulator saves 2 of its 4 bytes: at most 4 an element
    saved = before.peak_live_bytes - after.peak_live_bytes
    assert 0 < saved <= 4 * elements
