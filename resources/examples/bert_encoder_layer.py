"""A BERT-Large-like encoder layer (hidden 1024, 16 heads, sequence 384, FFN 4096) built
with poplin/popops/popnn on one ipu2: Q/K/V projections, per-head attention with a
softmax, output projection, residual and layer norm, GELU-free FFN (ReLU), residual and
layer norm. Checks the result against numpy and prints the profile summary.

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \\
        python resources/examples/bert_encoder_layer.py

``--seq``, ``--hidden``, ``--heads``, ``--ffn`` change the sizes (tests use small ones);
``--available-memory-proportion ffn1=0.1`` plans that matmul within 10% of each tile.
"""

from __future__ import annotations

import argparse

import numpy as np

from ipu_engine import (
    FLOAT,
    Engine,
    Graph,
    IPUModel,
    Sequence,
    concat,
    poplin,
    popnn,
    popops,
    poputil,
)
from ipu_engine.popops.expr import _1, _2, _3, _4, rsqrt

# the layer's inputs and parameters: name -> shape, as (rows, cols) of (seq, hidden, ffn)
PARAMETERS = {
    "x": ("seq", "hidden"),
    "wq": ("hidden", "hidden"),
    "wk": ("hidden", "hidden"),
    "wv": ("hidden", "hidden"),
    "wo": ("hidden", "hidden"),
    "w1": ("hidden", "ffn"),
    "w2": ("ffn", "hidden"),
    "gamma1": ("hidden",),
    "beta1": ("hidden",),
    "gamma2": ("hidden",),
    "beta2": ("hidden",),
}


def layer_norm(graph, x, gamma, beta, prog, name):
    rows, hidden = x.shape
    mean = popops.reduce(graph, x, [1], "add", prog, f"{name}/mean", scale=1.0 / hidden)
    centred = popops.map(graph, _1 - _2, [x, mean.reshape([rows, 1])], prog, f"{name}/centred")
    var = popops.reduce(graph, centred, [1], "square_add", prog, f"{name}/var", scale=1.0 / hidden)
    return popops.map(
        graph,
        _1 * rsqrt(_2 + 1e-5) * _3 + _4,
        [centred, var.reshape([rows, 1]), gamma.reshape([1, hidden]), beta.reshape([1, hidden])],
        prog,
        name,
    )


def build(sizes: dict[str, int], prog: Sequence, graph: Graph, proportions=None) -> dict:
    """The layer; ``proportions`` maps op names to their availableMemoryProportion."""
    amp = {name: {"availableMemoryProportion": p} for name, p in (proportions or {}).items()}
    t = {}
    for name, dims in PARAMETERS.items():
        t[name] = graph.add_variable(FLOAT, [sizes[d] for d in dims], name)
        poputil.map_tensor_linearly(graph, t[name])
        graph.create_host_write(name, t[name])
    heads, hidden = sizes["heads"], sizes["hidden"]
    head = hidden // heads
    x = t["x"]
    q = poplin.mat_mul(graph, x, t["wq"], prog, "q", amp.get("q"))
    k = poplin.mat_mul(graph, x, t["wk"], prog, "k", amp.get("k"))
    v = poplin.mat_mul(graph, x, t["wv"], prog, "v", amp.get("v"))
    contexts = []
    for h in range(heads):
        cols = (h * head, (h + 1) * head)
        qh, kh, vh = (m.slice(cols[0], cols[1], 1) for m in (q, k, v))
        scores = poplin.mat_mul(
            graph, qh, kh.transpose(), prog, f"head{h}/scores", amp.get(f"head{h}/scores")
        )
        scaled = popops.map(graph, _1 * (1.0 / np.sqrt(head)), [scores], prog, f"head{h}/scale")
        probs = popnn.softmax(graph, scaled, prog, f"head{h}/softmax")
        contexts.append(
            poplin.mat_mul(graph, probs, vh, prog, f"head{h}/context", amp.get(f"head{h}/context"))
        )
    context = concat(contexts, 1)
    attn = poplin.mat_mul(graph, context, t["wo"], prog, "attention_out", amp.get("attention_out"))
    res1 = popops.add(graph, attn, x, prog, "residual1")
    norm1 = layer_norm(graph, res1, t["gamma1"], t["beta1"], prog, "layer_norm1")
    hidden_act = popnn.relu(
        graph, poplin.mat_mul(graph, norm1, t["w1"], prog, "ffn1", amp.get("ffn1")), prog
    )
    ffn = poplin.mat_mul(graph, hidden_act, t["w2"], prog, "ffn2", amp.get("ffn2"))
    res2 = popops.add(graph, ffn, norm1, prog, "residual2")
    out = layer_norm(graph, res2, t["gamma2"], t["beta2"], prog, "layer_norm2")
    graph.create_host_read("out", out)
    return t


def reference(values: dict[str, np.ndarray], heads: int) -> np.ndarray:
    """The same layer in numpy (float64)."""
    v = {k: a.astype(np.float64) for k, a in values.items()}
    x = v["x"]
    q, k, vv = x @ v["wq"], x @ v["wk"], x @ v["wv"]
    head = q.shape[1] // heads
    parts = []
    for h in range(heads):
        s = slice(h * head, (h + 1) * head)
        scores = q[:, s] @ k[:, s].T / np.sqrt(head)
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        parts.append(p @ vv[:, s])
    res1 = np.concatenate(parts, axis=1) @ v["wo"] + x

    def norm(a: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        c = a - a.mean(axis=1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-5) * g + b

    n1 = norm(res1, v["gamma1"], v["beta1"])
    res2 = np.maximum(n1 @ v["w1"], 0) @ v["w2"] + n1
    return norm(res2, v["gamma2"], v["beta2"])


def parameter_bytes(sizes: dict[str, int]) -> int:
    """Hand count of the layer's input and parameters, in bytes (fp32)."""
    return sum(4 * int(np.prod([sizes[d] for d in dims])) for dims in PARAMETERS.values())


def proportion_arg(text: str) -> tuple[str, float]:
    """``NAME=P``: the availableMemoryProportion of the op called NAME."""
    name, _, value = text.partition("=")
    return name, float(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=384)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--ffn", type=int, default=4096)
    parser.add_argument(
        "--available-memory-proportion", type=proportion_arg, action="append", default=[],
        metavar="OP=P", help="plan the op called OP within P of each tile for temporaries",
    )  # fmt: skip
    args = parser.parse_args(argv)
    sizes = {"seq": args.seq, "hidden": args.hidden, "heads": args.heads, "ffn": args.ffn}

    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    prog = Sequence(name="bert_layer")
    tensors = build(sizes, prog, graph, dict(args.available_memory_proportion))
    engine = Engine(graph, prog)
    engine.load(device)
    rng = np.random.default_rng(7)
    values = {}
    for name, tensor in tensors.items():
        scale = 1.0 if name in ("x", "gamma1", "gamma2") else 1.0 / np.sqrt(tensor.shape[0])
        values[name] = (rng.standard_normal(tensor.shape) * scale).astype(np.float32)
        engine.write_tensor(name, values[name])
    engine.run(0)
    result = engine.read_tensor("out")
    expected = reference(values, args.heads)
    error = float(np.max(np.abs(result - expected)) / np.max(np.abs(expected)))
    print(f"encoder layer out {result.shape}: max relative error vs numpy {error:.2e}")
    print(f"input and parameters: {parameter_bytes(sizes)} bytes")
    engine.print_profile_summary()


if __name__ == "__main__":
    main()
