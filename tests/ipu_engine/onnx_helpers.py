"""Small ONNX models built with onnx.helper for the importer's tests, and onnxruntime (the
independent oracle) run on the same feeds."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from ipu_engine.onnx import InferenceSession

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
}
SMALL = {"tiles_per_ipu": 32}  # fewer tiles: the same lowering, quicker to compile


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    outputs: list[str],
    weights: dict[str, np.ndarray] | None = None,
    opset: int = 17,
    name: str = "model",
) -> onnx.ModelProto:
    """A model whose inputs are typed and shaped like ``inputs``; outputs' types inferred."""
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype], v.shape) for k, v in inputs.items()],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outputs],
        initializer=[numpy_helper.from_array(v, k) for k, v in (weights or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(model)
    del model.graph.output[:]
    model.graph.output.extend(
        v for v in (*inferred.graph.value_info, *inferred.graph.output) if v.name in outputs
    )
    order = {o: i for i, o in enumerate(outputs)}
    outs = sorted(model.graph.output, key=lambda v: order[v.name])
    del model.graph.output[:]
    model.graph.output.extend(outs)
    return model


def run_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()  # unfused: PopART's node attributes confuse its fusions
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


def assert_matches_ort(
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    rtol: float = 1e-4,
    atol: float = 1e-5,
    **session_args,
) -> InferenceSession:
    """The engine's outputs equal onnxruntime's (values, shapes and dtypes)."""
    expected = run_ort(model, feeds)
    session_args.setdefault("options", SMALL)
    session = InferenceSession(model, **session_args)
    got = session.run(None, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype, e.shape)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return session
