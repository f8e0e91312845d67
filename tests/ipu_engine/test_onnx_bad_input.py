"""Bad models and bad feeds: each a clear OnnxError naming the file, node or input."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from ipu_engine.common.errors import EngineError, OnnxError
from ipu_engine.onnx import InferenceSession
from tests.ipu_engine.onnx_helpers import SMALL, make_model

x = np.ones((2, 3), np.float32)


def relu_model(opset=17):
    return make_model(
        [helper.make_node("Relu", ["x"], ["y"], name="act")], {"x": x}, ["y"], opset=opset
    )


def test_onnx_error_is_an_engine_error():
    assert issubclass(OnnxError, EngineError)


def test_a_file_that_is_not_onnx_names_the_file(tmp_path):
    path = tmp_path / "notes.onnx"
    path.write_text("these are not the protobufs you are looking for\n" * 20)
    with pytest.raises(OnnxError, match=r"notes\.onnx: not an ONNX model"):
        InferenceSession(str(path))


def test_a_truncated_model_names_the_file(tmp_path):
    w = np.ones((64, 64), np.float32)
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        {"x": np.ones((2, 64), np.float32)},
        ["y"],
        {"w": w},
    )
    data = model.SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxError, match=r"cut\.onnx: not (an|a valid) ONNX model"):
        InferenceSession(path)


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(OnnxError, match=r"nowhere\.onnx: cannot read the model"):
        InferenceSession(tmp_path / "nowhere.onnx")


def test_an_unknown_opset_is_refused_with_the_supported_range():
    model = relu_model()
    model.opset_import[0].version = 99
    with pytest.raises(
        OnnxError,
        match=r"opset 99 of the default domain is not supported; supported opsets are 6\.\.\d+",
    ):
        InferenceSession(model)


def test_an_unsupported_operator_names_the_node_its_opset_and_what_is_supported():
    model = make_model(
        [helper.make_node("Det", ["x"], ["y"], name="determinant")],
        {"x": np.ones((3, 3), np.float32)},
        ["y"],
    )
    with pytest.raises(OnnxError) as err:
        InferenceSession(model)
    text = str(err.value)
    assert "node 'determinant' (Det, opset 17)" in text and "supported operators:" in text
    assert "Conv" not in text.split("supported operators:")[0] and "MatMul" in text


def test_an_unsupported_attribute_value_names_the_node():
    model = make_model(
        [helper.make_node("Gelu", ["x"], ["y"], name="g", approximate="cubic")],
        {"x": x},
        ["y"],
        opset=20,
    )
    with pytest.raises(
        OnnxError, match=r"node 'g' \(Gelu, opset 20\): approximate='cubic' is not supported"
    ):
        InferenceSession(model, options=SMALL).run(None, {"x": x})


def test_a_missing_feed_names_the_input():
    with pytest.raises(OnnxError, match=r"no feed for input 'x' \(tensor\(float\) \[2,3\]\)"):
        InferenceSession(relu_model()).run(None, {})


def test_an_unknown_feed_names_it():
    with pytest.raises(OnnxError, match="'z' is not an input of the model; inputs: \\['x'\\]"):
        InferenceSession(relu_model()).run(None, {"x": x, "z": x})


def test_a_feed_of_the_wrong_shape_names_the_input_and_both_shapes():
    with pytest.raises(OnnxError, match=r"input 'x' must have shape \[2,3\], got \[3, 2\]"):
        InferenceSession(relu_model()).run(None, {"x": np.ones((3, 2), np.float32)})


def test_a_feed_of_the_wrong_dtype_names_the_input_and_the_fix():
    with pytest.raises(OnnxError, match=r"input 'x' must be float32, got float64; convert it"):
        InferenceSession(relu_model()).run(None, {"x": x.astype(np.float64)})


def test_a_dynamic_dimension_is_fixed_by_the_feed():
    model = relu_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    session = InferenceSession(model, options=SMALL)
    assert session.get_inputs()[0].shape == ("batch", 3)
    (y,) = session.run(None, {"x": -np.ones((5, 3), np.float32)})
    assert y.shape == (5, 3) and not y.any()


def test_an_unknown_output_name_is_an_error():
    with pytest.raises(OnnxError, match="'nope' is not an output of the model"):
        InferenceSession(relu_model()).run(["nope"], {"x": x})


def test_a_node_of_another_operator_domain_is_refused_naming_it():
    model = relu_model()
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    model.graph.node[0].domain = "com.microsoft"
    with pytest.raises(OnnxError, match=r"node 'act' \(Relu, opset 17\): operators of domain "
                       r"'com\.microsoft' are not supported"):  # fmt: skip
        InferenceSession(model)


def test_a_shape_that_must_be_known_is_an_error_naming_the_node():
    model = make_model(
        [
            helper.make_node("Cast", ["x"], ["s"], to=onnx.TensorProto.INT64, name="c"),
            helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill"),
        ],
        {"x": np.array([2, 3], np.float32)},
        ["y"],
    )
    with pytest.raises(
        OnnxError, match=r"node 'fill' \(ConstantOfShape, opset 17\): its shape must be known"
    ):
        InferenceSession(model, options=SMALL).run(None, {"x": np.array([2, 3], np.float32)})


def _too_big():
    w = np.ones((1024, 512), np.float32)  # 2 MiB of weights on 2 tiles of 624 KiB
    x = np.ones((1, 1024), np.float32)
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
        {"x": x},
        ["y"],
        {"w": w},
        name="too_big",
    )
    return model, x


def test_weights_that_do_not_fit_are_an_error_naming_the_model():
    model, x = _too_big()
    with pytest.raises(OnnxError, match=r"<ModelProto 'too_big'>: Out of memory on tile"):
        InferenceSession(model, options={"tiles_per_ipu": 2}).run(None, {"x": x})


def test_an_out_of_memory_model_still_writes_its_report_when_allowed(tmp_path):
    model, x = _too_big()
    engine = {
        "debug.allowOutOfMemory": "true",
        "autoReport.all": "true",
        "autoReport.directory": str(tmp_path),
    }
    session = InferenceSession(model, options={"tiles_per_ipu": 2, "engine_options": engine})
    with pytest.raises(
        OnnxError, match=r"<ModelProto 'too_big'>: run\(0\): this engine does not fit"
    ):
        session.run(None, {"x": x})
    assert (tmp_path / "too_big" / "profile.pop").is_file()


def test_an_element_type_the_ipu_lacks_names_the_value():
    model = relu_model()
    model.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.BFLOAT16
    with pytest.raises(OnnxError, match=r"value 'x' is BFLOAT16; supported element types: FLOAT"):
        InferenceSession(model)


def test_dropout_in_training_mode_is_refused_even_when_fed():
    flag = np.array(True)
    model = make_model(
        [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")],
        {"x": x, "t": flag},
        ["y"],
        {"r": np.array(0.5, np.float32)},
    )
    with pytest.raises(
        OnnxError,
        match=r"node 'drop' \(Dropout, opset 17\): training_mode must be a constant False",
    ):
        InferenceSession(model, options=SMALL).run(None, {"x": x, "t": flag})
