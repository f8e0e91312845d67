"""The library ops ONNX models need, at model scale (issue 27): a ResNet-50 3x3
convolution [1,56,56,64] x [3,3,64,64] built, compiled and run, and a whole ResNet-50
(224x224, batch 1: convolutions with bias, ReLU, max pool, residual adds, global average
pool, the classifier) from ``poplin`` / ``popnn`` / ``popops`` calls, end to end on an
ipu2. The ONNX importer adds its own parsing on top of these figures."""

from __future__ import annotations

import time

import numpy as np

from benchmarks._timing import report
from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, poplin, popnn, popops, poputil

RESNET50_STAGES = [(3, 64), (4, 128), (6, 256), (3, 512)]  # (bottleneck blocks, width)


class _Builder:
    def __init__(self) -> None:
        self.device = IPUModel("ipu2").create_device()
        self.graph = Graph(self.device.target)
        self.prog = Sequence()
        self.inputs: dict[str, tuple[int, ...]] = {}

    def var(self, name: str, shape: tuple[int, ...]):
        t = self.graph.add_variable(FLOAT, list(shape), name)
        poputil.map_tensor_linearly(self.graph, t)
        self.graph.create_host_write(name, t)
        self.inputs[name] = shape
        return t

    def conv(self, x, name: str, k: int, f: int, stride: int = 1, relu: bool = True):
        w, b = self.var(f"{name}/w", (k, k, x.shape[3], f)), self.var(f"{name}/b", (f,))
        g, p = self.graph, self.prog
        y = poplin.convolution(g, x, w, p, name, stride=stride, padding=(k - 1) // 2, bias=b)
        return popnn.relu(g, y, p, f"{name}/relu") if relu else y

    def run(self, reads: list[str]) -> dict[str, np.ndarray]:
        engine = Engine(self.graph, self.prog)
        engine.load(self.device)
        rng = np.random.default_rng(0)
        for name, shape in self.inputs.items():
            engine.write_tensor(name, (rng.standard_normal(shape) * 0.05).astype(np.float32))
        engine.run(0)
        return {name: engine.read_tensor(name) for name in reads}


def resnet50() -> np.ndarray:
    m = _Builder()
    g, p = m.graph, m.prog
    h = m.conv(m.var("input", (1, 224, 224, 3)), "conv1", 7, 64, 2)
    h = popnn.max_pool(g, h, 3, p, "pool1", stride=2, padding=1)
    for stage, (blocks, width) in enumerate(RESNET50_STAGES):
        for block in range(blocks):
            stride, name = (2 if block == 0 and stage else 1), f"stage{stage}/block{block}"
            short = m.conv(h, f"{name}/shortcut", 1, width * 4, stride, False) if not block else h
            y = m.conv(m.conv(h, f"{name}/a", 1, width), f"{name}/b", 3, width, stride)
            y = m.conv(y, f"{name}/c", 1, width * 4, relu=False)
            h = popnn.relu(g, popops.add(g, y, short, p, f"{name}/add"), p, f"{name}/out")
    pooled = popnn.global_avg_pool(g, h, p, "pool5").reshape([1, 2048])
    logits = poplin.mat_mul(g, pooled, m.var("fc/w", (2048, 1000)), p, "fc")
    g.create_host_read("logits", logits)
    return m.run(["logits"])["logits"]


def conv_3x3() -> np.ndarray:
    m = _Builder()
    x, w = m.var("x", (1, 56, 56, 64)), m.var("w", (3, 3, 64, 64))
    m.graph.create_host_read("y", poplin.convolution(m.graph, x, w, m.prog, "y"))
    return m.run(["y"])["y"]


def main() -> None:
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        conv_3x3()
        times.append(time.perf_counter() - t0)
    report("conv [1,56,56,64]x[3,3,64,64] build+compile+run", min(times), "s", "< 1 s",
           min(times) < 1.0)  # fmt: skip
    t0 = time.perf_counter()
    logits = resnet50()
    seconds = time.perf_counter() - t0
    ok = seconds <= 60 and bool(np.isfinite(logits).all())
    report("ResNet-50 224x224 batch 1 build+compile+run", seconds, "s", "<= 60 s", ok)


if __name__ == "__main__":
    main()
