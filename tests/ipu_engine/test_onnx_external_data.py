"""Models from any exporter (issue 39): weights stored beside the model (``model.onnx.data``,
torch >= 2.9's default export) found from any current directory, or from ``base_dir`` for a
model given as bytes; operator domains imported but unused accepted (tf2onnx imports
``ai.onnx.ml``); and every bad external-data file a clear OnnxError naming the file."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import helper

from ipu_engine.common.errors import EngineError, OnnxError
from ipu_engine.onnx import InferenceSession, load_model
from tests.ipu_engine.onnx_helpers import SMALL, make_model, run_ort

rng = np.random.default_rng(39)
X = rng.standard_normal((2, 8)).astype(np.float32)
W = rng.standard_normal((8, 4)).astype(np.float32)
B = rng.standard_normal(4).astype(np.float32)


def _model(name: str = "main_graph") -> onnx.ModelProto:
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
        helper.make_node("Add", ["h", "b"], ["y"], name="bias"),
    ]
    return make_model(nodes, {"x": X}, ["y"], {"w": W, "b": B}, name=name)


def _saved(folder, name: str = "net.onnx", location: str | None = None) -> str:
    """The model saved in ``folder`` with every weight in ``<name>.data`` beside it."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    onnx.save_model(
        _model(), path, save_as_external_data=True, all_tensors_to_one_file=True,
        location=location or f"{name}.data", size_threshold=0,
    )  # fmt: skip
    return path


def _with_entry(path: str, tensor: str, key: str, value: str) -> None:
    """Rewrite one external-data entry of ``tensor`` in the model file at ``path``."""
    model = onnx.load(path, load_external_data=False)
    (t,) = [t for t in model.graph.initializer if t.name == tensor]
    entries = {e.key: e for e in t.external_data}
    if key in entries:
        entries[key].value = value
    else:
        t.external_data.add(key=key, value=value)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def test_weights_beside_the_model_are_found_from_another_directory(tmp_path, monkeypatch):
    path = _saved(tmp_path / "models")
    assert os.path.isfile(tmp_path / "models" / "net.onnx.data")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (expected,) = run_ort(onnx.load(path), {"x": X})
    (got,) = InferenceSession(path, options=SMALL).run(None, {"x": X})
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_a_model_given_as_bytes_reads_its_weights_from_base_dir(tmp_path, monkeypatch):
    path = _saved(tmp_path / "models")
    data = onnx.load(path, load_external_data=False).SerializeToString()
    monkeypatch.chdir(tmp_path)
    (got,) = InferenceSession(data, options=SMALL, base_dir=tmp_path / "models").run(None, {"x": X})
    np.testing.assert_allclose(got, X @ W + B, rtol=1e-5, atol=1e-5)
    with pytest.raises(OnnxError, match=r"<bytes>: tensor 'w' is stored outside the model, in "
                       r"'net\.onnx\.data'; pass the folder holding it as base_dir"):  # fmt: skip
        InferenceSession(data)


def test_a_model_proto_with_external_data_is_read_into_a_copy(tmp_path):
    path = _saved(tmp_path)
    proto = onnx.load(path, load_external_data=False)
    before = proto.SerializeToString()
    model = load_model(proto, base_dir=tmp_path)
    np.testing.assert_array_equal(model.initializers["w"], W)
    assert proto.SerializeToString() == before  # the caller's model is as it was


def test_the_report_is_named_after_the_file_when_the_graph_name_is_generic(tmp_path):
    path = _saved(tmp_path, "resnet_tiny.onnx")
    assert load_model(path).name == "resnet_tiny"  # not main_graph
    assert load_model(_model()).name == "main_graph"  # no file to say more
    assert load_model(_model("decoder")).name == "decoder"


def test_a_missing_data_file_names_it(tmp_path):
    path = _saved(tmp_path)
    os.remove(tmp_path / "net.onnx.data")
    with pytest.raises(OnnxError, match=r"net\.onnx: tensor '\w' in 'net\.onnx\.data'"
                       r"|external data file 'net\.onnx\.data' is missing"):  # fmt: skip
        InferenceSession(path)


def test_a_truncated_data_file_names_it_and_the_tensor(tmp_path):
    path = _saved(tmp_path)
    data = tmp_path / "net.onnx.data"
    data.write_bytes(data.read_bytes()[:40])
    with pytest.raises(OnnxError, match=r"net\.onnx: tensor '\w' in 'net\.onnx\.data' \(40 bytes\)"
                       r": bytes \d+\.\.\d+ lie outside the file \(truncated"):  # fmt: skip
        InferenceSession(path)


def test_a_tensor_whose_offset_lies_past_the_end_is_an_error(tmp_path):
    path = _saved(tmp_path)
    _with_entry(path, "w", "offset", "4096")
    with pytest.raises(OnnxError, match=r"tensor 'w' in 'net\.onnx\.data' \(\d+ bytes\): bytes "
                       r"4096\.\.4224 lie outside the file"):  # fmt: skip
        InferenceSession(path)


def test_a_length_that_does_not_fit_the_shape_is_an_error(tmp_path):
    path = _saved(tmp_path)
    _with_entry(path, "w", "length", "16")
    with pytest.raises(OnnxError, match=r"tensor 'w' .*holds 16 bytes from offset \d+, but its "
                       r"shape \[8, 4\] and type need 128"):  # fmt: skip
        InferenceSession(path)


@pytest.mark.parametrize("offset", ["-8", "eight", "1e3"])
def test_an_offset_that_is_not_a_byte_count_is_an_error(tmp_path, offset):
    path = _saved(tmp_path)
    _with_entry(path, "w", "offset", offset)
    with pytest.raises(OnnxError, match=rf"tensor 'w': external data offset '{offset}' in "
                       r"'net\.onnx\.data' is not a whole number of bytes"):  # fmt: skip
        InferenceSession(path)


def test_a_path_leaving_the_models_folder_is_refused_and_never_read(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    path = _saved(tmp_path / "models" / "deep")
    # a perfectly good data file, but outside the model's folder
    outside.mkdir()
    (outside / "net.onnx.data").write_bytes((tmp_path / "models/deep/net.onnx.data").read_bytes())
    opened = []
    real_open = open

    def spy(file, *args, **kwargs):
        opened.append(os.path.realpath(file))
        return real_open(file, *args, **kwargs)

    for location in ("../../../outside/net.onnx.data", "../../etc/passwd"):
        for name in ("w", "b"):
            _with_entry(path, name, "location", location)
        monkeypatch.setattr("builtins.open", spy)
        with pytest.raises(OnnxError, match=rf"net\.onnx: tensor '\w': external data file "
                           rf"'{location}' leads outside the model's folder"):  # fmt: skip
            load_model(path)
        monkeypatch.undo()
    assert not [p for p in opened if not p.startswith(str(tmp_path / "models" / "deep"))]


def test_an_absolute_path_or_a_symbolic_link_out_of_the_folder_is_refused(tmp_path):
    path = _saved(tmp_path / "models")
    _with_entry(path, "w", "location", "/etc/passwd")
    with pytest.raises(OnnxError, match=r"'/etc/passwd' is an absolute path"):
        load_model(path)
    secret = tmp_path / "secret.data"
    secret.write_bytes(b"\0" * 256)
    os.symlink(secret, tmp_path / "models" / "link.data")
    _with_entry(path, "w", "location", "link.data")
    with pytest.raises(OnnxError, match=r"'link\.data' leads outside the model's folder"):
        load_model(path)


def test_a_data_path_that_is_a_folder_is_not_a_regular_file(tmp_path):
    path = _saved(tmp_path / "models")
    (tmp_path / "models" / "sub").mkdir()
    _with_entry(path, "w", "location", "sub")
    with pytest.raises(OnnxError, match=r"external data file 'sub' is not a regular file"):
        load_model(path)


def test_every_external_data_failure_is_an_engine_error(tmp_path):
    path = _saved(tmp_path)
    os.remove(tmp_path / "net.onnx.data")
    with pytest.raises(EngineError):
        load_model(path)
    with pytest.raises(EngineError, match="base_dir is a folder's path, not int"):
        load_model(_model(), base_dir=3)


def _tf2onnx_like(nodes, opset=13):
    """What tf2onnx writes for a Keras model: the default domain and ai.onnx.ml imported,
    producer tf2onnx, graph name tf2onnx (built with onnx.helper: tf2onnx is not installed)."""
    graph = helper.make_graph(
        nodes, "tf2onnx",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 8])],
    )  # fmt: skip
    model = helper.make_model(
        graph, producer_name="tf2onnx", producer_version="1.16.1",
        opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("ai.onnx.ml", 2)],
    )  # fmt: skip
    model.ir_version = 8
    return model


def test_a_domain_imported_but_unused_is_accepted_as_tf2onnx_writes_it():
    model = _tf2onnx_like([helper.make_node("Relu", ["x"], ["y"], name="dense/Relu")])
    (expected,) = run_ort(model, {"x": X})
    (got,) = InferenceSession(model, options=SMALL).run(None, {"x": X})
    np.testing.assert_array_equal(got, expected)


def test_a_node_of_another_domain_is_refused_naming_the_node():
    node = helper.make_node("Normalizer", ["x"], ["y"], name="norm", domain="ai.onnx.ml")
    with pytest.raises(OnnxError, match=r"node 'norm' \(Normalizer, opset 13\): operators of "
                       r"domain 'ai\.onnx\.ml' are not supported"):  # fmt: skip
        InferenceSession(_tf2onnx_like([node]))
    custom = _tf2onnx_like([helper.make_node("Gelu", ["x"], ["y"], name="g", domain="com.acme")])
    custom.opset_import.append(helper.make_opsetid("com.acme", 1))
    with pytest.raises(OnnxError, match=r"node 'g' \(Gelu, opset 13\): operators of domain "
                       r"'com\.acme' are not supported"):  # fmt: skip
        InferenceSession(custom)


def test_a_models_local_function_is_inlined():
    """torch's export_modules_as_functions and onnxscript call functions of the model's own
    domain: their nodes are lowered as if written out."""
    body = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Neg", ["r"], ["o"])]
    function = helper.make_function(
        "pkg.mine", "NegRelu", ["a"], ["o"], body, [helper.make_opsetid("", 13)]
    )
    model = _tf2onnx_like([helper.make_node("NegRelu", ["x"], ["y"], domain="pkg.mine")])
    model.opset_import.append(helper.make_opsetid("pkg.mine", 1))
    model.functions.append(function)
    (got,) = InferenceSession(model, options=SMALL).run(None, {"x": X})
    np.testing.assert_array_equal(got, -np.maximum(X, 0))
