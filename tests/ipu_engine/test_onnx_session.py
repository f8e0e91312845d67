"""InferenceSession: onnxruntime's calling convention, weights as variables, constant folding,
debug contexts per ONNX node, PopART placement attributes, reports named after the graph."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from ipu_engine.frontend.ir import SOURCE_OPS
from ipu_engine.onnx import InferenceSession
from tests.ipu_engine.onnx_helpers import SMALL, assert_matches_ort, make_model

rng = np.random.default_rng(5)


def mlp(ipu_attrs=None, stage_attrs=None, batch=4):
    """x -> fc1 (Gemm) -> relu -> fc2 (MatMul) + b2 -> softmax, with a Shape/Reshape chain."""
    weights = {
        "W1": rng.standard_normal((8, 16)).astype(np.float32),
        "b1": rng.standard_normal(16).astype(np.float32),
        "W2": rng.standard_normal((16, 5)).astype(np.float32),
        "b2": rng.standard_normal(5).astype(np.float32),
    }
    names = ["fc1", "act", "shape", "flat", "fc2", "bias2", "probs"]
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Shape", ["r"], ["s"]),
        helper.make_node("Reshape", ["r", "s"], ["r2"]),
        helper.make_node("MatMul", ["r2", "W2"], ["m"]),
        helper.make_node("Add", ["m", "b2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"]),
    ]
    for i, (node, name) in enumerate(zip(nodes, names, strict=True)):
        node.name = name
        if ipu_attrs is not None:
            node.attribute.append(helper.make_attribute("__ipu_number", ipu_attrs[i]))
        if stage_attrs is not None:
            node.attribute.append(helper.make_attribute("__pipeline_stage", stage_attrs[i]))
    x = rng.standard_normal((batch, 8)).astype(np.float32)
    return make_model(nodes, {"x": x}, ["y", "logits"], weights, name="mlp"), x


def test_session_has_onnxruntimes_face_and_answers():
    model, x = mlp()
    session = assert_matches_ort(model, {"x": x})
    (inp,) = session.get_inputs()
    assert (inp.name, inp.shape, inp.type) == ("x", (4, 8), "tensor(float)")
    assert [o.name for o in session.get_outputs()] == ["y", "logits"]
    (logits,) = session.run(["logits"], {"x": x})
    assert logits.shape == (4, 5)


def test_weights_are_variables_named_by_their_onnx_value_and_shapes_fold_on_the_host():
    model, x = mlp()
    session = InferenceSession(model, options=SMALL)
    session.run(None, {"x": x})
    trace = session.last.traced.trace
    assert set(trace.params) == {"W1", "b1", "W2", "b2"}
    np.testing.assert_array_equal(
        trace.params["W2"].attrs["value"],
        model.graph.initializer[2].float_data
        or np.frombuffer(model.graph.initializer[2].raw_data, np.float32).reshape(16, 5),
    )
    ops = [n.op for n in trace.nodes if n.op not in SOURCE_OPS]
    # Shape -> Reshape of the same shape is folded away: no node of the trace is a reshape
    assert "reshape" not in ops and ops.count("matmul") == 2


def test_every_library_op_is_in_the_onnx_layer_under_its_nodes_name():
    model, x = mlp()
    session = InferenceSession(model, options=SMALL)
    session.run(None, {"x": x})
    contexts = [
        c
        for c in session.last.graph.debug.items
        if c.op.split("::")[0] in ("poplin", "popops", "popnn")
    ]
    assert contexts and all(c.layer == "ONNX" for c in contexts)
    nodes = {c.name.split("/")[1] for c in contexts}
    assert nodes == {"Gemm_fc1", "Relu_act", "MatMul_fc2", "Add_bias2", "Softmax_probs"}


def test_report_is_named_after_the_graph(tmp_path):
    model, x = mlp()
    options = {
        **SMALL,
        "engine_options": {"autoReport.all": "true", "autoReport.directory": str(tmp_path)},
    }
    InferenceSession(model, options=options).run(None, {"x": x})
    assert (tmp_path / "mlp" / "profile.pop").is_file()


def test_ipu_number_attributes_shard_the_model_and_keep_the_answer():
    model, x = mlp(ipu_attrs=[0, 0, 0, 0, 1, 1, 1])
    session = assert_matches_ort(model, {"x": x})
    assert session.ipus == 2
    shards = [n.shard for n in session.last.traced.trace.nodes if n.op == "matmul"]
    assert shards == [0, 1]


def test_ipus_without_attributes_split_the_nodes_by_weight_bytes():
    model, x = mlp()
    session = assert_matches_ort(model, {"x": x}, ipus=2)
    trace = session.last.traced.trace
    # W1 + b1 (576 bytes) and W2 + b2 (340 bytes): fc1 on IPU 0, fc2 on IPU 1
    assert trace.params["W1"].shard == 0 and trace.params["W2"].shard == 1


def test_pipeline_stage_attributes_pipeline_micro_batches():
    model, _ = mlp(ipu_attrs=[0, 0, 0, 0, 1, 1, 1], stage_attrs=[0, 0, 0, 0, 1, 1, 1], batch=2)
    x = rng.standard_normal((6, 8)).astype(np.float32)  # 3 micro-batches of 2
    session = InferenceSession(model, batches_per_step=3, options=SMALL)
    y, logits = session.run(None, {"x": x})
    from tests.ipu_engine.onnx_helpers import run_ort

    expected = np.concatenate([run_ort(model, {"x": x[i : i + 2]})[0] for i in (0, 2, 4)])
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-6)
    labels = [step.label for step in session.last.schedule]
    assert (
        labels[0].startswith("rampUp")
        and "steadyState" in labels
        and labels[-1].startswith("rampDown")
    )


def test_replicas_each_run_their_micro_batch():
    model, _ = mlp(batch=2)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    session = InferenceSession(model, replication_factor=2, options=SMALL)
    (y, _) = session.run(None, {"x": x})
    from tests.ipu_engine.onnx_helpers import run_ort

    expected = np.concatenate([run_ort(model, {"x": x[i : i + 2]})[0] for i in (0, 2)])
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-6)


def test_an_output_known_on_the_host_needs_no_engine():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    model = make_model([helper.make_node("Shape", ["x"], ["s"])], {"x": x}, ["s"])
    session = InferenceSession(model, options=SMALL)
    (s,) = session.run(None, {"x": x})
    assert s.dtype == np.int64 and s.tolist() == [3, 4] and session.last is None


def test_each_run_returns_arrays_of_its_own() -> None:
    """Results are returned without a copy (the engine fills arrays made for the run), yet
    no two runs, nor one output asked for twice, nor an output known on the host, share
    memory: changing one changes no other."""
    model, x = mlp()
    session = InferenceSession(model, options=SMALL)
    first_y, first_logits = session.run(None, {"x": x})
    kept = first_y.copy()
    second_y, again = session.run(["y", "y"], {"x": x * 2})
    assert not np.shares_memory(first_y, second_y) and not np.shares_memory(second_y, again)
    np.testing.assert_array_equal(first_y, kept)
    second_y[...] = 0
    assert again.any()
    shape_model = make_model([helper.make_node("Shape", ["x"], ["s"])], {"x": x}, ["s"])
    shapes = InferenceSession(shape_model, options=SMALL)
    (s,) = shapes.run(None, {"x": x})
    s[...] = 0
    assert shapes.run(None, {"x": x})[0].tolist() == [4, 8]


@pytest.mark.parametrize("bad", ["dtype", "ipus"])
def test_bad_session_options_are_errors_naming_the_option(bad):
    from ipu_engine.common.errors import OnnxError

    model, _ = mlp(ipu_attrs=[0, 0, 0, 0, 1, 1, 1])
    with pytest.raises(OnnxError, match="dtype='bfloat16'" if bad == "dtype" else "ipus=1"):
        if bad == "dtype":
            InferenceSession(model, options={"dtype": "bfloat16"})
        else:
            InferenceSession(model, ipus=1)


def test_each_nodes_ops_are_located_at_the_model_and_node_number(tmp_path):
    import onnx

    model, x = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, path)
    session = InferenceSession(path, options=SMALL)
    session.run(None, {"x": x})
    located = {
        c.name.split("/")[1]: c.location
        for c in session.last.graph.debug.items
        if c.layer == "ONNX"
    }
    assert located["Gemm_fc1"] == (str(path), 1) and located["Softmax_probs"] == (str(path), 7)
    weights = {  # a matmul's weight is made by its reader (ONNX/Gemm_fc1/W1/W1), others bare
        c.name.rsplit("/", 1)[-1]: c.location
        for c in session.last.graph.debug.items
        if c.api == "Graph.add_variable"
    }
    assert weights["W1"] == (str(path), 1) and weights["W2"] == (str(path), 5)  # their first users


def test_pipeline_stages_without_ipu_numbers_run_each_stage_on_its_own_ipu():
    model, _ = mlp(stage_attrs=[0, 0, 0, 1, 1, 2, 2], batch=2)
    x = rng.standard_normal((8, 8)).astype(np.float32)  # 4 micro-batches of 2
    session = InferenceSession(model, batches_per_step=4, options=SMALL)
    assert session.ipus == 3
    y, _ = session.run(None, {"x": x})
    from tests.ipu_engine.onnx_helpers import run_ort

    expected = np.concatenate([run_ort(model, {"x": x[i : i + 2]})[0] for i in range(0, 8, 2)])
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-6)
    stages = {
        n.stage: n.shard
        for n in session.last.traced.trace.nodes
        if n.stage >= 0 and n.op != "input"
    }
    assert stages == {0: 0, 1: 1, 2: 2}
