"""A BERT-base-like encoder layer and a GPT-2-like decoder block (causal mask), built with
onnx.helper, equal onnxruntime on one IPU and split over four."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_engine.onnx import InferenceSession
from tests.ipu_engine.onnx_helpers import SMALL, run_ort
from tests.ipu_engine.onnx_transformers import bert_layer, gpt2_block

rng = np.random.default_rng(2027)


def bert_feeds(batch=2, seq=16, hidden=64):
    mask = np.ones((batch, seq), np.float32)
    mask[1, seq - 5 :] = 0  # the second sequence is padded
    return {
        "hidden_states": rng.standard_normal((batch, seq, hidden)).astype(np.float32),
        "attention_mask": mask,
    }


def gpt2_feeds(batch=2, seq=12, vocab=50):
    return {"input_ids": rng.integers(0, vocab, (batch, seq)).astype(np.int64)}


MODELS = {"bert": (bert_layer, bert_feeds), "gpt2": (gpt2_block, gpt2_feeds)}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("ipus", [1, 4])
def test_transformer_equals_onnxruntime_on_one_and_four_ipus(name, ipus):
    build, feeds_of = MODELS[name]
    model, feeds = build(), feeds_of()
    (expected,) = run_ort(model, feeds)
    session = InferenceSession(model, ipus=ipus, options=SMALL)
    (got,) = session.run(None, feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    trace = session.last.traced.trace
    used = {n.shard for n in trace.nodes}
    assert used == set(range(ipus))
    assert session.last.device.target.num_ipus == ipus


def test_gpt2_causal_mask_and_positions_fold_on_the_host():
    session = InferenceSession(gpt2_block(), options=SMALL)
    session.run(None, gpt2_feeds())
    trace = session.last.traced.trace
    # Range, the comparisons and the position Gather need no device op: the mask is one
    # constant operand of the Where's map, the positions' rows one weight
    # the position rows are gathered on the host: one weight of those rows, not the table
    assert "wpe/Gather_out" in trace.params and "wpe" not in trace.params
    # token ids are gathered on the IPU (a one-hot product), the tied head is transposed once
    assert {"wte", "lm_head/Transpose_out"} <= set(trace.params)
    ops = [n.op for n in trace.nodes]
    assert ops.count("matmul_batched") == 2  # scores and context: one grouped product each
    assert ops.count("gather") == 1  # the token ids' rows, gathered at run time
    assert ops.count("select") == 1  # Where: one popops::select under the causal mask
    consts = [n for n in trace.nodes if n.op == "const" and n.shape == (12, 12)]
    assert consts, "the causal mask is a host constant"


def test_bert_layer_pipelined_over_four_ipus_gives_the_same_answer():
    model = bert_layer()
    feeds = [bert_feeds() for _ in range(4)]
    expected = np.concatenate([run_ort(model, f)[0] for f in feeds])
    joined = {k: np.concatenate([f[k] for f in feeds]) for k in feeds[0]}
    session = InferenceSession(model, ipus=4, batches_per_step=4, options=SMALL)
    (got,) = session.run(None, joined)
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    assert any(s.label == "steadyState" for s in session.last.schedule)
