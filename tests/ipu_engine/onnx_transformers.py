"""A BERT-base-like encoder layer and a GPT-2-like decoder block built with onnx.helper, the
way PyTorch exports them: shapes computed with Shape/Gather/Concat, Erf and tanh GELUs,
LayerNormalization, a causal mask from Range and comparisons, token embeddings gathered."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    """Nodes and initializers of a graph under construction, with unique value names."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.weights: dict[str, np.ndarray] = {}
        self.count = 0

    def op(
        self, op_type: str, inputs: list[str], name: str, outputs: int = 1, **attrs
    ) -> list[str]:
        outs = [f"{name}_out{i}" if outputs > 1 else f"{name}_out" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs

    def one(self, op_type: str, inputs: list[str], name: str, **attrs) -> str:
        return self.op(op_type, inputs, name, **attrs)[0]

    def weight(self, name: str, *shape: int, scale: float = 0.05) -> str:
        self.weights[name] = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return name

    def const(self, name: str, value) -> str:
        self.weights[name] = np.asarray(value)
        return name

    def linear(self, x: str, name: str, fan_in: int, fan_out: int) -> str:
        h = self.one(
            "MatMul", [x, self.weight(f"{name}.weight", fan_in, fan_out)], f"{name}/MatMul"
        )
        return self.one("Add", [h, self.weight(f"{name}.bias", fan_out, scale=0.1)], f"{name}/Add")

    def layer_norm(self, x: str, name: str, hidden: int) -> str:
        self.weights[f"{name}.weight"] = (1 + 0.1 * self.rng.standard_normal(hidden)).astype(
            np.float32
        )
        self.weight(f"{name}.bias", hidden, scale=0.1)
        return self.one(
            "LayerNormalization", [x, f"{name}.weight", f"{name}.bias"], name, axis=-1, epsilon=1e-5
        )

    def model(self, inputs, outputs, name: str, opset: int = 17) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            name,
            inputs,
            outputs,
            initializer=[numpy_helper.from_array(v, k) for k, v in self.weights.items()],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model


def _heads_shape(g: GraphBuilder, x: str, name: str, heads: int, head_dim: int) -> str:
    """[B, S, heads, head_dim] from x's shape, as PyTorch exports view(): Shape, Gather, Concat."""
    shape = g.one("Shape", [x], f"{name}/Shape")
    b = g.one(
        "Gather",
        [shape, g.const(f"{name}/zero", np.array([0], np.int64))],
        f"{name}/GatherB",
        axis=0,
    )
    s = g.one(
        "Gather",
        [shape, g.const(f"{name}/one", np.array([1], np.int64))],
        f"{name}/GatherS",
        axis=0,
    )
    rest = g.const(f"{name}/heads", np.array([heads, head_dim], np.int64))
    return g.one("Concat", [b, s, rest], f"{name}/Concat", axis=0)


def _split_heads(g: GraphBuilder, x: str, name: str, heads: int, head_dim: int, perm) -> str:
    r = g.one("Reshape", [x, _heads_shape(g, x, name, heads, head_dim)], f"{name}/Reshape")
    return g.one("Transpose", [r], f"{name}/Transpose", perm=perm)


def _attention(
    g: GraphBuilder,
    x: str,
    name: str,
    hidden: int,
    heads: int,
    q: str,
    k: str,
    v: str,
    mask_add: str | None,
    causal: str | None,
) -> str:
    head_dim = hidden // heads
    qh = _split_heads(g, q, f"{name}/q", heads, head_dim, [0, 2, 1, 3])
    kh = _split_heads(g, k, f"{name}/k", heads, head_dim, [0, 2, 3, 1])
    vh = _split_heads(g, v, f"{name}/v", heads, head_dim, [0, 2, 1, 3])
    scores = g.one("MatMul", [qh, kh], f"{name}/scores")
    scale = g.const(f"{name}/sqrt_d", np.array(np.sqrt(head_dim), np.float32))
    scores = g.one("Div", [scores, scale], f"{name}/scale")
    if mask_add is not None:
        scores = g.one("Add", [scores, mask_add], f"{name}/mask")
    if causal is not None:
        big = g.const(f"{name}/minus_big", np.array(-1e4, np.float32))
        scores = g.one("Where", [causal, scores, big], f"{name}/causal")
    probs = g.one("Softmax", [scores], f"{name}/Softmax", axis=-1)
    context = g.one("MatMul", [probs, vh], f"{name}/context")
    context = g.one("Transpose", [context], f"{name}/merge/Transpose", perm=[0, 2, 1, 3])
    flat = g.const(f"{name}/merge/shape", np.array([0, 0, hidden], np.int64))
    return g.one("Reshape", [context, flat], f"{name}/merge/Reshape")


def _erf_gelu(g: GraphBuilder, x: str, name: str) -> str:
    scaled = g.one(
        "Div", [x, g.const(f"{name}/sqrt2", np.array(np.sqrt(2), np.float32))], f"{name}/Div"
    )
    erf = g.one("Erf", [scaled], f"{name}/Erf")
    plus = g.one("Add", [erf, g.const(f"{name}/one", np.array(1, np.float32))], f"{name}/Add")
    times = g.one("Mul", [x, plus], f"{name}/Mul")
    return g.one(
        "Mul", [times, g.const(f"{name}/half", np.array(0.5, np.float32))], f"{name}/Mul_1"
    )


def bert_layer(batch=2, seq=16, hidden=64, heads=4, intermediate=256, seed=0) -> onnx.ModelProto:
    """One BERT encoder layer: self-attention with an additive padding mask, post-LN, Erf GELU."""
    g = GraphBuilder(seed)
    x = "hidden_states"
    # attention_mask [B, S] of 1/0 -> (1 - mask) * -10000 broadcast over heads and queries
    m = g.one(
        "Unsqueeze",
        ["attention_mask", g.const("mask/axes", np.array([1, 2], np.int64))],
        "mask/Unsqueeze",
    )
    m = g.one("Sub", [g.const("mask/one", np.array(1, np.float32)), m], "mask/Sub")
    m = g.one("Mul", [m, g.const("mask/big", np.array(-10000, np.float32))], "mask/Mul")
    q, k, v = (
        g.linear(x, f"attention.self.{p}", hidden, hidden) for p in ("query", "key", "value")
    )
    context = _attention(g, x, "attention.self", hidden, heads, q, k, v, m, None)
    out = g.linear(context, "attention.output.dense", hidden, hidden)
    out = g.one("Add", [out, x], "attention.output/residual")
    attn = g.layer_norm(out, "attention.output.LayerNorm", hidden)
    h = _erf_gelu(
        g, g.linear(attn, "intermediate.dense", hidden, intermediate), "intermediate.gelu"
    )
    h = g.linear(h, "output.dense", intermediate, hidden)
    h = g.one("Add", [h, attn], "output/residual")
    y = g.layer_norm(h, "output.LayerNorm", hidden)
    g.nodes.append(helper.make_node("Identity", [y], ["layer_output"], name="output"))
    return g.model(
        [
            helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, [batch, seq, hidden]),
            helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, [batch, seq]),
        ],
        [helper.make_tensor_value_info("layer_output", TensorProto.FLOAT, [batch, seq, hidden])],
        "bert_layer",
    )


def gpt2_block(batch=2, seq=12, hidden=48, heads=4, vocab=50, seed=1) -> onnx.ModelProto:
    """Token + position embeddings, one pre-LN GPT-2 block (fused qkv Split, causal mask from
    Range and LessOrEqual, tanh GELU with Pow), final LayerNorm, logits by the tied embedding."""
    g = GraphBuilder(seed)
    wte = g.weight("wte", vocab, hidden, scale=0.5)
    wpe = g.weight("wpe", seq, hidden, scale=0.1)
    tok = g.one("Gather", [wte, "input_ids"], "wte/Gather", axis=0)
    shape = g.one("Shape", ["input_ids"], "pos/Shape")
    length = g.one(
        "Gather", [shape, g.const("pos/one", np.array(1, np.int64))], "pos/Gather", axis=0
    )
    positions = g.one(
        "Range",
        [
            g.const("pos/start", np.array(0, np.int64)),
            length,
            g.const("pos/step", np.array(1, np.int64)),
        ],
        "pos/Range",
    )
    pos = g.one("Gather", [wpe, positions], "wpe/Gather", axis=0)
    x = g.one("Add", [tok, pos], "embed/Add")
    # causal[i, j] = j <= i, from the positions (folded on the host)
    rows = g.one(
        "Unsqueeze", [positions, g.const("causal/ax1", np.array([1], np.int64))], "causal/rows"
    )
    cols = g.one(
        "Unsqueeze", [positions, g.const("causal/ax0", np.array([0], np.int64))], "causal/cols"
    )
    causal = g.one("LessOrEqual", [cols, rows], "causal/LessOrEqual")
    h = g.layer_norm(x, "h.0.ln_1", hidden)
    qkv = g.linear(h, "h.0.attn.c_attn", hidden, 3 * hidden)
    q, k, v = g.op(
        "Split",
        [qkv, g.const("h.0.attn/split", np.array([hidden] * 3, np.int64))],
        "h.0.attn/Split",
        outputs=3,
        axis=2,
    )
    context = _attention(g, h, "h.0.attn", hidden, heads, q, k, v, None, causal)
    a = g.linear(context, "h.0.attn.c_proj", hidden, hidden)
    x = g.one("Add", [x, a], "h.0/residual_1")
    h = g.layer_norm(x, "h.0.ln_2", hidden)
    f = g.linear(h, "h.0.mlp.c_fc", hidden, 4 * hidden)
    cube = g.one("Pow", [f, g.const("gelu/three", np.array(3, np.float32))], "h.0.mlp.gelu/Pow")
    inner = g.one(
        "Add",
        [
            f,
            g.one(
                "Mul", [cube, g.const("gelu/c", np.array(0.044715, np.float32))], "h.0.mlp.gelu/Mul"
            ),
        ],
        "h.0.mlp.gelu/Add",
    )
    inner = g.one(
        "Mul",
        [inner, g.const("gelu/s", np.array(np.sqrt(2 / np.pi), np.float32))],
        "h.0.mlp.gelu/Mul_1",
    )
    t = g.one("Tanh", [inner], "h.0.mlp.gelu/Tanh")
    t = g.one("Add", [t, g.const("gelu/one", np.array(1, np.float32))], "h.0.mlp.gelu/Add_1")
    gelu = g.one(
        "Mul",
        [
            g.one(
                "Mul", [f, g.const("gelu/half", np.array(0.5, np.float32))], "h.0.mlp.gelu/Mul_2"
            ),
            t,
        ],
        "h.0.mlp.gelu/Mul_3",
    )
    m = g.linear(gelu, "h.0.mlp.c_proj", 4 * hidden, hidden)
    x = g.one("Add", [x, m], "h.0/residual_2")
    x = g.layer_norm(x, "ln_f", hidden)
    wte_t = g.one("Transpose", [wte], "lm_head/Transpose", perm=[1, 0])
    g.nodes.append(helper.make_node("MatMul", [x, wte_t], ["logits"], name="lm_head/MatMul"))
    return g.model(
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, seq, vocab])],
        "gpt2_block",
    )
