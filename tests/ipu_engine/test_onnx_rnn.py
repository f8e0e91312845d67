"""LSTM and GRU (issue 39) equal onnxruntime: forward, reverse and bidirectional, initial
states, sequence lengths fed at run time or held in the model, peepholes, clip,
input_forget, linear_before_reset, custom activations and the batch-first layout; every
output (Y, Y_h, Y_c) compared."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from ipu_engine.onnx import InferenceSession
from tests.ipu_engine.onnx_helpers import SMALL, assert_matches_ort, make_model

rng = np.random.default_rng(1939)
T, B, IN, H = 5, 3, 4, 6  # steps, batch, input size, hidden size


def f32(*shape, scale=0.5):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def _rnn(op, gates, case):
    """(model, feeds) for ``case``: which optional inputs, which fed, which attributes."""
    dirs = 2 if case.get("direction") == "bidirectional" else 1
    batch_first = case.get("layout", 0) == 1
    values = {
        "X": f32(B, T, IN) if batch_first else f32(T, B, IN, scale=1.0),
        "W": f32(dirs, gates * H, IN), "R": f32(dirs, gates * H, H), "B": f32(dirs, 2 * gates * H),
        "sequence_lens": np.array(case.get("lens", [T] * B), np.int32),
        "initial_h": f32(B, dirs, H) if batch_first else f32(dirs, B, H),
        "initial_c": f32(B, dirs, H) if batch_first else f32(dirs, B, H),
        "P": f32(dirs, 3 * H),
    }  # fmt: skip
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h"]
    order += ["initial_c", "P"] if op == "LSTM" else []
    used = {"X", "W", "R", *case.get("inputs", ())}
    names = [n if n in used else "" for n in order]
    while names[-1] == "":
        names.pop()
    attrs = {k: v for k, v in case.items() if k not in ("inputs", "fed", "lens")}
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, hidden_size=H, name="rnn", **attrs)
    fed = {"X", *case.get("fed", ())}
    feeds = {n: values[n] for n in names if n in fed}
    weights = {n: values[n] for n in names if n and n not in fed}
    return make_model([node], feeds, outputs, weights, opset=14), feeds


LSTM_CASES = {
    "forward": {"inputs": ["B"]},
    "bidirectional_states": {"direction": "bidirectional", "inputs": ["B", "initial_h",
                             "initial_c"]},
    "reverse_lengths_fed": {"direction": "reverse", "inputs": ["B", "sequence_lens"],
                            "fed": ["sequence_lens"], "lens": [5, 2, 4]},
    "bidirectional_everything_fed": {
        "direction": "bidirectional", "lens": [3, 5, 1], "fed": ["W", "R", "B",
        "sequence_lens", "initial_h", "initial_c", "P"],
        "inputs": ["B", "sequence_lens", "initial_h", "initial_c", "P"]},
    "reverse_lengths_in_model_peepholes": {"direction": "reverse", "lens": [4, 5, 2],
                                           "inputs": ["sequence_lens", "P"]},
    "batch_first": {"layout": 1, "direction": "bidirectional", "inputs": ["initial_h"]},
    "clip_input_forget": {"clip": 0.7, "input_forget": 1, "inputs": ["B"]},
    "custom_activations": {"activations": ["HardSigmoid", "ScaledTanh", "Affine"],
                           "activation_alpha": [0.3, 0.8, 1.5], "activation_beta": [0.4, 1.2,
                           -0.1], "inputs": ["B"]},
}  # fmt: skip

GRU_CASES = {
    "forward": {"inputs": ["B"]},
    "reset_after_bidirectional": {"linear_before_reset": 1, "direction": "bidirectional",
                                  "inputs": ["B", "initial_h"]},
    "reverse_lengths_fed": {"direction": "reverse", "inputs": ["B", "sequence_lens"],
                            "fed": ["sequence_lens"], "lens": [2, 5, 3]},
    "bidirectional_lengths_reset_after": {"direction": "bidirectional", "linear_before_reset":
                                          1, "inputs": ["sequence_lens"], "lens": [1, 4, 5]},
    "batch_first": {"layout": 1, "inputs": ["B", "initial_h"], "fed": ["initial_h"]},
    "clip": {"clip": 0.5, "inputs": ["B", "initial_h"], "fed": ["initial_h"]},
    "custom_activations": {"activations": ["Relu", "Softsign", "LeakyRelu", "Tanh"],
                           "direction": "bidirectional", "activation_alpha": [0.2]},
}  # fmt: skip


def _check(model, feeds):
    """onnxruntime is the oracle; it has no batch-first recurrent layers (layout 1), so for
    those ONNX's reference evaluator is (also independent of the engine)."""
    if any(a.name == "layout" and a.i == 1 for a in model.graph.node[0].attribute):
        expected = ReferenceEvaluator(model).run(None, feeds)
        got = InferenceSession(model, options=SMALL).run(None, feeds)
        for g, e in zip(got, expected, strict=True):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=2e-6)
    else:
        assert_matches_ort(model, feeds, rtol=1e-4, atol=2e-6)


@pytest.mark.parametrize("case", LSTM_CASES)
def test_lstm_matches_onnxruntime(case):
    _check(*_rnn("LSTM", 4, LSTM_CASES[case]))


@pytest.mark.parametrize("case", GRU_CASES)
def test_gru_matches_onnxruntime(case):
    _check(*_rnn("GRU", 3, GRU_CASES[case]))


def test_each_step_is_a_recurrent_matmul_and_one_cell_compute_set():
    model, feeds = _rnn("LSTM", 4, {"direction": "bidirectional", "inputs": ["B"]})
    session = InferenceSession(model, options=SMALL)
    session.run(None, feeds)
    items = session.last.graph.debug.items
    assert [c.api for c in items].count("popnn::lstm::lstmFwd") == 1
    # the input projection up front, then a grouped product per step (the directions
    # are its groups)
    assert [c.api for c in items].count("poplin::matMulGrouped") == 1 + T
    cells = {cs.name for cs in session.last.graph.compute_sets if cs.name.endswith("/cell")}
    assert len(cells) == T
