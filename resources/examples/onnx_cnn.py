"""A small CNN built with onnx.helper (as an exporter writes it) and run with
``ipu_engine.onnx.InferenceSession``, the way PopART runs ONNX graphs on the IPU.

Conv (3x3, then a grouped 3x3) -> BatchNormalization -> Relu -> MaxPool -> Conv -> Relu ->
GlobalAveragePool -> Flatten -> Gemm -> Softmax, on a batch of 2 RGB 32x32 images. Every
engine step keeps its ONNX node's name (layer "ONNX"), so Operations groups by node. The
engine program (and report folder) is called "onnx_cnn".
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ipu_engine.onnx import InferenceSession


def small_cnn(seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)

    def w(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    weights = {
        "conv1.weight": w(16, 3, 3, 3), "conv1.bias": w(16),
        "conv2.weight": w(32, 4, 3, 3), "conv2.bias": w(32),  # 4 groups of 4 channels
        "bn.scale": 1 + w(32), "bn.bias": w(32), "bn.mean": w(32),
        "bn.var": np.abs(w(32)) + 0.5,
        "conv3.weight": w(64, 32, 1, 1), "conv3.bias": w(64),
        "fc.weight": w(10, 64), "fc.bias": w(10),
    }  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4, strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c2", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                         ["b2"], name="bn"),
        helper.make_node("Relu", ["b2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p2", "conv3.weight", "conv3.bias"], ["c3"], name="conv3",
                         kernel_shape=[1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("GlobalAveragePool", ["r3"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "onnx_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def main(argv: list[str] | None = None) -> np.ndarray:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--save", help="also write the model to this .onnx file")
    args = parser.parse_args(argv)
    model = small_cnn()
    if args.save:
        onnx.save(model, args.save)
    image = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    session = InferenceSession(model)
    (probs,) = session.run(None, {"image": image})
    print(f"class probabilities of 2 images: argmax {probs.argmax(axis=1).tolist()}")
    return probs


if __name__ == "__main__":
    main()
