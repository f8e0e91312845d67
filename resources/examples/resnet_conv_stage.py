"""A ResNet-50-like convolution stage (conv2_x: three bottleneck blocks at 56x56, 64 -> 256
channels) built with poplin.convolution, popops and popnn on one ipu2. Checks the result
against numpy and prints the profile summary.

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \\
        python resources/examples/resnet_conv_stage.py

``--batch``, ``--size``, ``--width`` change the sizes (tests use small ones);
``--available-memory-proportion block1/reduce=0.02`` plans that convolution within 2% of
each tile for its temporaries.
"""

from __future__ import annotations

import argparse

import numpy as np

from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, poplin, popnn, popops, poputil


def layer_shapes(width: int, blocks: int = 3) -> dict[str, tuple[int, ...]]:
    """Weights of each convolution, [KH, KW, C, F]: 1x1 reduce, 3x3, 1x1 expand (x4), and
    the first block's 1x1 projection of the shortcut."""
    shapes = {"shortcut": (1, 1, width, 4 * width)}
    for b in range(blocks):
        c_in = width if b == 0 else 4 * width
        shapes[f"block{b}/reduce"] = (1, 1, c_in, width)
        shapes[f"block{b}/conv3x3"] = (3, 3, width, width)
        shapes[f"block{b}/expand"] = (1, 1, width, 4 * width)
    return shapes


def build(
    graph: Graph, prog: Sequence, batch: int, size: int, width: int, proportions=None
) -> dict:
    """The stage; ``proportions`` maps convolution names to availableMemoryProportion."""
    amp = {name: {"availableMemoryProportion": p} for name, p in (proportions or {}).items()}
    tensors = {"x": graph.add_variable(FLOAT, [batch, size, size, width], "x")}
    for name, shape in layer_shapes(width).items():
        tensors[name] = graph.add_variable(FLOAT, list(shape), name)
    for name, t in tensors.items():
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(name, t)
    x = tensors["x"]
    shortcut = poplin.convolution(
        graph, x, tensors["shortcut"], prog, "shortcut", options=amp.get("shortcut")
    )
    for b in range(3):
        h = x
        for layer in ("reduce", "conv3x3", "expand"):
            name = f"block{b}/{layer}"
            h = poplin.convolution(graph, h, tensors[name], prog, name, options=amp.get(name))
            if layer != "expand":
                h = popnn.relu(graph, h, prog)
        x = popnn.relu(graph, popops.add(graph, h, shortcut, prog, f"block{b}/residual"), prog)
        shortcut = x
    graph.create_host_read("out", x)
    return tensors


def reference(values: dict[str, np.ndarray]) -> np.ndarray:
    """The same stage in numpy (float64)."""

    def conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        kh, kw = w.shape[:2]
        pad = (kh - 1) // 2
        xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
        out = 0
        for a in range(kh):
            for b in range(kw):
                out = out + xp[:, a : a + x.shape[1], b : b + x.shape[2], :] @ w[a, b]
        return out

    v = {k: a.astype(np.float64) for k, a in values.items()}
    x = v["x"]
    shortcut = conv(x, v["shortcut"])
    for b in range(3):
        h = np.maximum(conv(x, v[f"block{b}/reduce"]), 0)
        h = np.maximum(conv(h, v[f"block{b}/conv3x3"]), 0)
        x = np.maximum(conv(h, v[f"block{b}/expand"]) + shortcut, 0)
        shortcut = x
    return x


def proportion_arg(text: str) -> tuple[str, float]:
    """``NAME=P``: the availableMemoryProportion of the op called NAME."""
    name, _, value = text.partition("=")
    return name, float(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--size", type=int, default=56)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument(
        "--available-memory-proportion", type=proportion_arg, action="append", default=[],
        metavar="OP=P", help="plan the op called OP within P of each tile for temporaries",
    )  # fmt: skip
    args = parser.parse_args(argv)
    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    prog = Sequence(name="resnet_stage")
    proportions = dict(args.available_memory_proportion)
    tensors = build(graph, prog, args.batch, args.size, args.width, proportions)
    engine = Engine(graph, prog)
    engine.load(device)
    rng = np.random.default_rng(11)
    values = {}
    for name, t in tensors.items():
        fan_in = int(np.prod(t.shape[:3])) if name != "x" else 1
        values[name] = (rng.standard_normal(t.shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        engine.write_tensor(name, values[name])
    engine.run(0)
    result = engine.read_tensor("out")
    expected = reference(values)
    error = float(np.max(np.abs(result - expected)) / np.max(np.abs(expected)))
    print(f"stage out {result.shape}: max relative error vs numpy {error:.2e}")
    engine.print_profile_summary()


if __name__ == "__main__":
    main()
