"""Insights' FP16 candidates count every float32 weight an operation reads -- convolutions'
weights and biases as well as matmuls' operands -- with the bytes of each operation. The
expected figures are the ONNX initializers' element counts x 4, taken from the model the
test builds, never from the report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from ipu_engine.onnx import InferenceSession
from profiler_core.insights import insights
from profiler_core.insights.findings import Severity
from profiler_core.report import open_report

TILE_BYTES = 638_976


def conv_matmul_weights() -> dict[str, np.ndarray]:
    """conv1 3 -> 32 channels, conv2 and conv3 32 -> 32 (the same shape twice), a matmul
    32 -> 200; every array float32."""
    rng = np.random.default_rng(7)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    return {
        "conv1.weight": w(32, 3, 3, 3), "conv1.bias": w(32),
        "conv2.weight": w(32, 32, 3, 3), "conv2.bias": w(32),
        "conv3.weight": w(32, 32, 3, 3), "conv3.bias": w(32),
        "fc.weight": w(32, 200),
    }  # fmt: skip


def conv_matmul_model():
    weights = conv_matmul_weights()
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "conv3.weight", "conv3.bias"], ["c3"], name="conv3",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c3"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "fc.weight"], ["logits"], name="fc"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "conv_matmul",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [2, 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [2, 200])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture(scope="module")
def conv_matmul_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("conv_matmul")
    engine = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    session = InferenceSession(conv_matmul_model(), options={"engine_options": engine})
    image = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
    session.run(None, {"image": image})
    return directory / "conv_matmul"


def fp16_finding(report):
    (found,) = [f for f in insights(report).findings if f.rule == "fp16-candidates"]
    return found


def evidence(finding) -> dict[str, object]:
    return {e.label: e.value for e in finding.evidence}


def test_every_convolution_weight_and_bias_and_the_matmul_weight_are_counted(
    conv_matmul_report,
):
    weights = conv_matmul_weights()
    expected = sum(a.size for a in weights.values()) * 4  # 25,792 elements
    assert expected == (864 + 32 + 2 * (9216 + 32) + 6400) * 4 == 103_168
    finding = fp16_finding(open_report(conv_matmul_report))
    facts = evidence(finding)
    assert facts["FP32 bytes"] == expected
    assert facts["Saving in FP16"] == expected // 2
    assert finding.title.startswith("7 FP32 weights read by 4 operations")
    assert f"would save {expected // 2:,} bytes" in finding.title


def test_each_operation_lists_the_bytes_of_the_weights_it_reads(conv_matmul_report):
    weights = conv_matmul_weights()

    def node_bytes(*names: str) -> str:
        size = sum(weights[n].size for n in names) * 4
        return f"{size:,} bytes in {len(names)} weight{'s' if len(names) > 1 else ''}"

    per_op = {
        label.removeprefix("Read by ").split(" ")[0]: value
        for label, value in evidence(fp16_finding(open_report(conv_matmul_report))).items()
        if label.startswith("Read by ")
    }
    # conv2 and conv3 have weights of one shape: each still gets one weight and one bias
    assert per_op == {
        "ONNX/Conv_conv2": node_bytes("conv2.weight", "conv2.bias"),
        "ONNX/Conv_conv3": node_bytes("conv3.weight", "conv3.bias"),
        "ONNX/MatMul_fc": node_bytes("fc.weight"),
        "ONNX/Conv_conv1": node_bytes("conv1.weight", "conv1.bias"),
    }
    labels = [e.label for e in fp16_finding(open_report(conv_matmul_report)).evidence]
    shown = [label.split(" ")[2] for label in labels if label.startswith("Read by ")]
    assert shown[-1] == "ONNX/Conv_conv1"  # the most bytes first: conv1 reads the fewest
    assert "Read by ONNX/MatMul_fc (onnx::MatMul) at " in " ".join(labels)


def test_tutorial4_counts_its_three_matrices_not_the_product_m5_reads(tutorial4_report):
    """m1 {900,600}, m2 {600,300} (read by m4) and m3 {300,200} (read by m5); m4's result,
    which m5 reads too, is an activation (not always-live), not a weight."""
    finding = fp16_finding(open_report(tutorial4_report))
    facts = evidence(finding)
    assert facts["FP32 bytes"] == (900 * 600 + 600 * 300 + 300 * 200) * 4 == 3_120_000
    assert facts["Tensors"] == "m1, m2, m3"
    m4 = next(v for k, v in facts.items() if k.startswith("Read by m4 (poplin::matMul)"))
    m5 = next(v for k, v in facts.items() if k.startswith("Read by m5 (poplin::matMul)"))
    assert m4 == f"{(900 * 600 + 600 * 300) * 4:,} bytes in 2 weights"
    assert m5 == f"{300 * 200 * 4:,} bytes in 1 weight"
    assert (finding.source.operation, finding.source.op) == ("m4", "poplin::matMul")  # the most


def test_with_headroom_half_precision_is_offered_for_size_or_speed_not_as_a_fix(
    conv_matmul_report,
):
    report = open_report(conv_matmul_report)
    totals = np.asarray(report.memory.by_category, dtype=np.int64).sum(axis=0)
    assert totals.max() < 0.9 * TILE_BYTES  # the model uses a few % of its fullest tile
    finding = fp16_finding(report)
    assert finding.severity is Severity.INFO
    assert "Memory is not short here" in finding.suggestion
    assert f"{TILE_BYTES - int(totals.max()):,} bytes free" in finding.suggestion


def resnet50_model(size: int) -> tuple[object, dict[str, np.ndarray]]:
    """ResNet-50 as an inference export writes it (batch norms folded into the convolutions'
    biases; a Gemm classifier), its weights those of the 224 x 224 model, on a
    ``size`` x ``size`` image."""
    rng = np.random.default_rng(0)
    weights: dict[str, np.ndarray] = {}
    nodes = []

    def conv(x: str, cin: int, cout: int, k: int, stride: int, name: str, relu: bool = True):
        weights[f"{name}.weight"] = np.zeros((cout, cin, k, k), np.float32)
        weights[f"{name}.bias"] = np.zeros(cout, np.float32)
        pads = [k // 2] * 4
        nodes.append(helper.make_node("Conv", [x, f"{name}.weight", f"{name}.bias"], [name],
                                      name=name, kernel_shape=[k, k], pads=pads,
                                      strides=[stride, stride]))  # fmt: skip
        if not relu:
            return name
        nodes.append(helper.make_node("Relu", [name], [f"{name}_r"], name=f"{name}_relu"))
        return f"{name}_r"

    x = conv("image", 3, 64, 7, 2, "stem")
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], name="pool", kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1]))  # fmt: skip
    x, cin = "pool", 64
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512], strict=True)):
        for b in range(blocks):
            stride, n = (2 if b == 0 and stage else 1), f"layer{stage + 1}.{b}"
            h = conv(x, cin, width, 1, 1, f"{n}.conv1")
            h = conv(h, width, width, 3, stride, f"{n}.conv2")
            h = conv(h, width, 4 * width, 1, 1, f"{n}.conv3", relu=False)
            sc = conv(x, cin, 4 * width, 1, stride, f"{n}.downsample", relu=False) if b == 0 else x
            nodes.append(helper.make_node("Add", [h, sc], [f"{n}.add"], name=f"{n}.add"))
            nodes.append(helper.make_node("Relu", [f"{n}.add"], [f"{n}.out"], name=f"{n}.relu"))
            x, cin = f"{n}.out", 4 * width
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    weights["fc.weight"] = (rng.standard_normal((1000, 2048)) * 0.01).astype(np.float32)
    weights["fc.bias"] = np.zeros(1000, np.float32)
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"],
                                  name="fc", transB=1))  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "resnet50",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, weights


def test_resnet50s_convolution_weights_are_counted_not_only_its_classifier(tmp_path):
    """Issue 38: on ResNet-50 Insights said "1 FP32 tensors feed matmuls: half precision
    would save 4,096,000 bytes" -- the classifier alone, without ~94 MB of convolutions."""
    model, weights = resnet50_model(size=64)
    engine = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    session = InferenceSession(model, options={"engine_options": engine})
    session.run(None, {"image": np.zeros((1, 3, 64, 64), np.float32)})
    finding = fp16_finding(open_report(tmp_path / "resnet50"))
    convolutions = [k for k in weights if k.startswith(("stem", "layer"))]
    assert len(convolutions) == 2 * 53  # 53 convolutions, each a weight and a bias
    conv_bytes = sum(weights[k].size for k in convolutions) * 4
    assert conv_bytes == 93_925_888  # 23,454,912 weights and 26,560 biases, 4 bytes each
    # the classifier's weight is read by its matmul; its bias by an element-wise add, which
    # records no operand shapes, so it is not attributed (4,000 bytes)
    expected = conv_bytes + weights["fc.weight"].size * 4
    assert evidence(finding)["FP32 bytes"] == expected == 102_117_888
    assert finding.title.startswith("107 FP32 weights read by 54 operations")
