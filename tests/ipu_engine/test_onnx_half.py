"""ONNX models computed in float16, as PopART's half conversion makes them: ``dtype=
"float16"`` (the CLI's ``--half``) puts weights, activations and float outputs in half for
real -- the weights take half the bytes, every float op computes in half, and the answers stay
close to onnxruntime's float32 ones."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ipu_engine.common.types import FLOAT, HALF
from ipu_engine.onnx import InferenceSession
from tests.ipu_engine.onnx_helpers import SMALL, run_ort
from tests.ipu_engine.onnx_transformers import bert_layer

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "onnx_cnn.py"


def small_cnn():
    spec = importlib.util.spec_from_file_location("onnx_cnn", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.small_cnn()


def float_types(session: InferenceSession) -> set:
    """The element types of every float node the session's program computed."""
    return {n.type for n in session.last.traced.trace.nodes if n.type.is_float}


def weight_bytes(session: InferenceSession) -> int:
    return sum(n.size * n.type.size for n in session.last.traced.trace.params.values())


@pytest.mark.parametrize(
    ("model", "rtol"), [(small_cnn, 2e-2), (bert_layer, 2e-2)], ids=["cnn", "bert_layer"]
)
def test_a_half_session_computes_in_half_with_half_the_weight_bytes(model, rtol):
    proto = model()
    inputs = {i.name: i for i in proto.graph.input}
    rng = np.random.default_rng(3)
    feeds = {}
    for name, value in inputs.items():
        dims = [d.dim_value or 2 for d in value.type.tensor_type.shape.dim]  # batch: 2
        if value.type.tensor_type.elem_type == 1:  # FLOAT
            feeds[name] = rng.standard_normal(dims).astype(np.float32)
        else:
            feeds[name] = rng.integers(0, 10, dims).astype(np.int64)
    expected = run_ort(proto, feeds)
    full = InferenceSession(proto, options=SMALL)
    half = InferenceSession(proto, options={**SMALL, "dtype": "float16"})
    got_full, got_half = full.run(None, feeds), half.run(None, feeds)
    assert float_types(full) == {FLOAT} and float_types(half) == {HALF}
    assert weight_bytes(half) * 2 == weight_bytes(full)
    for e, f, h in zip(expected, got_full, got_half, strict=True):
        assert f.dtype == np.float32 and h.dtype == np.float16
        scale = float(np.max(np.abs(e))) or 1.0
        assert np.max(np.abs(h.astype(np.float32) - e)) <= rtol * scale
        assert np.max(np.abs(h.astype(np.float32) - e)) > 0  # it really computed in half


def test_the_cli_half_flag_prints_float16_outputs(tmp_path, capsys):
    import onnx

    from ipu_engine.onnx.__main__ import main

    path = tmp_path / "cnn.onnx"
    onnx.save(small_cnn(), path)
    assert main([str(path), "--half", "--outputs", str(tmp_path / "y.npz")]) == 0
    out = np.load(tmp_path / "y.npz")
    assert {out[k].dtype for k in out.files} == {np.dtype(np.float16)}


def test_an_empty_feed_is_an_error_naming_the_input():
    from ipu_engine.common.errors import OnnxError

    session = InferenceSession(small_cnn(), options=SMALL)
    with pytest.raises(
        OnnxError, match=r"input 'image' has no elements \(shape \[0, 3, 32, 32\]\)"
    ):
        session.run(None, {"image": np.zeros((0, 3, 32, 32), np.float32)})
