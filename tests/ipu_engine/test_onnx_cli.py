"""``python -m ipu_engine.onnx``: seeded random inputs, outputs to .npz, a report named after
the graph, and bad input as one line naming the file or input (exit 2, no traceback); the
bundled ONNX example equals onnxruntime."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from ipu_engine.onnx.__main__ import main
from tests.ipu_engine.onnx_helpers import make_model, run_ort

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "onnx_cnn.py"


@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    module = runpy.run_path(str(EXAMPLE), run_name="example")
    path = tmp_path_factory.mktemp("cnn") / "cnn.onnx"
    onnx.save(module["small_cnn"](), path)
    return path


def test_cli_runs_seeded_random_inputs_writes_outputs_and_the_report(cnn, tmp_path, capsys):
    out = tmp_path / "y.npz"
    assert (
        main([str(cnn), "--batch", "3", "--outputs", str(out), "--report", str(tmp_path / "r")])
        == 0
    )
    probs = np.load(out)["probs"]
    image = np.random.default_rng(0).standard_normal((3, 3, 32, 32)).astype(np.float32)
    (expected,) = run_ort(onnx.load(cnn), {"image": image})
    np.testing.assert_allclose(probs, expected, rtol=1e-3, atol=1e-6)
    assert (tmp_path / "r" / "onnx_cnn" / "profile.pop").is_file()
    assert "probs: float32[3, 10]" in capsys.readouterr().out


def test_cli_takes_inputs_from_an_npz(cnn, tmp_path):
    image = np.random.default_rng(7).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "x.npz", image=image)
    assert (
        main([str(cnn), "--inputs", str(tmp_path / "x.npz"), "--outputs", str(tmp_path / "y.npz")])
        == 0
    )
    (expected,) = run_ort(onnx.load(cnn), {"image": image})
    np.testing.assert_allclose(np.load(tmp_path / "y.npz")["probs"], expected, rtol=1e-3, atol=1e-6)


def test_cli_names_a_dynamic_dimension_without_a_value(tmp_path, capsys):
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], {"x": np.ones((2, 3), np.float32)}, ["y"]
    )
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "seq"
    onnx.save(model, tmp_path / "m.onnx")
    assert main([str(tmp_path / "m.onnx")]) == 2
    err = capsys.readouterr().err
    assert (
        "input 'x' has dynamic dimension 1 'seq' with no value; give the input with --inputs" in err
    )


def test_cli_refuses_a_batch_the_model_fixes(cnn, tmp_path, capsys):
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], {"x": np.ones((2, 3), np.float32)}, ["y"]
    )
    onnx.save(model, tmp_path / "m.onnx")
    assert main([str(tmp_path / "m.onnx"), "--batch", "4"]) == 2
    assert "input 'x' has a fixed batch of 2; --batch 4 needs" in capsys.readouterr().err


def test_cli_on_a_file_that_is_not_onnx_prints_one_line_and_exits_2(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x00\x01garbage" * 100)
    done = subprocess.run(
        [sys.executable, "-m", "ipu_engine.onnx", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert (
        done.stderr.startswith(f"error: {path}: not an ONNX model")
        and "Traceback" not in done.stderr
    )


def test_bundled_example_equals_onnxruntime():
    module = runpy.run_path(str(EXAMPLE), run_name="example")
    probs = module["main"]([])
    image = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    (expected,) = run_ort(module["small_cnn"](), {"image": image})
    np.testing.assert_allclose(probs, expected, rtol=1e-3, atol=1e-6)


def test_import_ipu_engine_does_not_import_onnx():
    code = "import sys, ipu_engine; assert 'onnx' not in sys.modules and 'ipu_engine.onnx' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_honours_pvti_options(cnn, tmp_path):
    import json
    import os

    env = {**os.environ, "PVTI_OPTIONS": json.dumps({"enable": "true", "directory": str(tmp_path)})}
    done = subprocess.run(
        [sys.executable, "-m", "ipu_engine.onnx", str(cnn)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.glob("*.pvti"))
