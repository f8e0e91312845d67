"""The light models shipped in the onnx package equal onnxruntime on a seeded input (rtol
1e-3), compared at the logits before the final Softmax: their weights are constants, so
every logit is the same number (~1e9..1e21) and float32 rounding in another summation
order (1e-7 relative, thousands absolute) decides the probabilities; those are checked
against numpy's softmax of the engine's own logits. Each run writes its report, on which the
Operations page's figures must add up (issue 38's invariants, tests/operations_invariants.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest

from ipu_engine.onnx import InferenceSession
from profiler_core.analysis.debug_groups import GROUPINGS
from profiler_core.report import open_report
from tests.ipu_engine.onnx_helpers import run_ort
from tests.operations_invariants import check_cycles_add_up, check_memory_columns

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def with_logits(path: Path) -> tuple[onnx.ModelProto, str | None]:
    """The model with its final Softmax's input as a second output (None for a model whose
    output is its logits: DenseNet-121 ends in its classifier)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    softmax = next((n for n in reversed(model.graph.node) if n.op_type == "Softmax"), None)
    if softmax is None:
        return model, None
    logits = next(v for v in model.graph.value_info if v.name == softmax.input[0])
    model.graph.output.append(logits)
    return model, logits.name


# squeezenet: Conv, Relu, MaxPool, Concat, Dropout, GlobalAveragePool, Softmax (~10 s);
# shufflenet: grouped Conv, BatchNormalization, channel shuffle (Reshape/Transpose),
# AveragePool, Sum, Gemm (~13 s); inception_v1: LRN, AveragePool, Concat, Gemm (~22 s,
# 2.2 GB). The other six take up to ~30 s and 4 GB each: ``make models`` runs all nine
# (POPVISION_LIGHT_MODELS=all).
IN_MAKE_TEST = ["squeezenet", "shufflenet", "inception_v1"]
EVERY_MODEL = sorted(p.name[len("light_") : -len(".onnx")] for p in LIGHT.glob("light_*.onnx"))
MODELS = EVERY_MODEL if os.environ.get("POPVISION_LIGHT_MODELS") == "all" else IN_MAKE_TEST
# VGG-19 (548 MiB of weights, 390,400 bytes a tile on one IPU) fits one IPU as each weight
# of a fully connected layer is made in its matmul plan's layout, as PopART makes it: with
# the weights spread linearly, FC6's plan received a copy of its 411 MB weight (281,668
# bytes a tile) and no count of IPUs from 1 to 8 held it. Its fullest tile holds 594,580 of
# 638,976 bytes. Every light model runs on one IPU.


def test_every_light_model_of_the_onnx_package_is_known():
    assert len(EVERY_MODEL) == 9 and set(IN_MAKE_TEST) <= set(EVERY_MODEL)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_light_model_equals_onnxruntime_on_a_seeded_input(name, tmp_path):
    model, logits_name = with_logits(LIGHT / f"light_{name}.onnx")
    (spec,) = [
        i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}
    ]
    shape = [d.dim_value for d in spec.type.tensor_type.shape.dim]
    x = np.random.default_rng(27).standard_normal(shape).astype(np.float32)
    reports = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    session = InferenceSession(model, options={"engine_options": reports})
    expected = run_ort(model, {spec.name: x})
    got = session.run(None, {spec.name: x})
    logits, expected_logits = got[-1], expected[-1]
    scale = np.abs(expected_logits).max()
    assert scale > 0
    np.testing.assert_allclose(logits, expected_logits, rtol=1e-3, atol=1e-6 * scale)
    if logits_name is not None:  # the probabilities: numpy's softmax of the engine's logits
        z = logits.astype(np.float64).reshape(len(logits), -1)
        softmax = np.exp(z - z.max(axis=1, keepdims=True))
        softmax /= softmax.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(got[0].reshape(z.shape), softmax, rtol=1e-3, atol=1e-7)
    ops = {n.op_type for n in model.graph.node}
    assert "Conv" in ops and session.last is not None
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    report = open_report(folder)
    for group_by in (*GROUPINGS, "phase"):
        check_cycles_add_up(report, group_by)
    for group_by in ("op", "name", "layer"):
        check_memory_columns(report, group_by)
