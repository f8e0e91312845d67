"""popnn's recurrent cell codelets: one time step of an LSTM or GRU for a block of rows
(batch entries of one direction) and hidden units, fusing the gates' non-linearities and the
state update as PopLibs' ``BasicLstmCellForwardPass`` does. The products with the weights
are poplin matmuls before them; a vertex gets each gate's pre-activation parts (input
projection, recurrent product, bias) laid out [rows, gates, units].

With sequence lengths, a row whose sequence has ended keeps its state and outputs zeros.
Vertices of equal sizes run as one batched numpy call.
"""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.codelets.alike_edges import alike_vertices
from ipu_engine.codelets.ops_table import BINARY_OPS, UNARY_OPS
from ipu_engine.common.types import INT, UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import SUPERVISOR_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import InOut, Input, Output, State, Vertex, VertexBatch, VertexSizes

_STATE = ("rows", "units", "step")
Activation = tuple[str, float, float]  # ONNX name, alpha, beta


def _softplus(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return np.logaddexp(0, x)


#: ONNX's recurrent activation functions: numpy, and cycles per element (popops' costs of
#: the element-wise ops each is made of, ``codelets/ops_table.py``)
ACTIVATIONS = {
    "Sigmoid": (
        lambda x, a, b: 0.5 * (np.tanh(0.5 * x) + 1),
        UNARY_OPS["SIGMOID"].cycles_per_element,
    ),
    "Tanh": (lambda x, a, b: np.tanh(x), UNARY_OPS["TANH"].cycles_per_element),
    "Relu": (lambda x, a, b: np.maximum(x, 0), UNARY_OPS["RELU"].cycles_per_element),
    "Affine": (lambda x, a, b: a * x + b, 1.0),
    "LeakyRelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 1.0),
    "ThresholdedRelu": (lambda x, a, b: np.where(x > a, x, 0), 1.0),
    "ScaledTanh": (lambda x, a, b: a * np.tanh(b * x), UNARY_OPS["TANH"].cycles_per_element + 1),
    "HardSigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 1.5),
    "Elu": (lambda x, a, b: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0))), 9.0),
    "Softsign": (lambda x, a, b: x / (1 + np.abs(x)), 5.0),
    "Softplus": (_softplus, 18.0),
}
_MAC = BINARY_OPS["MULTIPLY"].cycles_per_element + BINARY_OPS["ADD"].cycles_per_element


class CellVertex(Vertex):
    """A cell's cost per element of its block: its activations plus its multiplies and adds
    (``elementwise`` each), as popops would charge them one op at a time."""

    supervisor = True
    code_bytes = 1400
    cycles_per_unit = 0.0

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        units = sizes.state("rows").astype(np.float64) * sizes.state("units")
        return SUPERVISOR_OVERHEAD_CYCLES + units * cls.cycles_per_unit


def _act(activation: Activation, x: np.ndarray) -> np.ndarray:
    name, alpha, beta = activation
    return ACTIVATIONS[name][0](x, alpha, beta)


def _gather(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    return values[starts[:, None] + np.arange(size)]


def _blocks(batch: VertexBatch, names: tuple[str, ...], sel: np.ndarray, shapes: dict) -> dict:
    """Each field of ``names`` for vertices ``sel`` as [V, *shape] float arrays."""
    out = {}
    for name in names:
        shape = shapes[name]
        size = int(np.prod(shape))
        out[name] = _gather(batch[name], batch.offsets(name)[:-1][sel], size).reshape(
            sel.size, *shape
        )
    return out


def _ended(batch: VertexBatch, sel: np.ndarray, rows: int, step: int) -> np.ndarray:
    """[V, rows, 1]: True where a row's sequence has ended before this step."""
    lengths = _gather(batch["seqLen"], batch.offsets("seqLen")[:-1][sel], rows)
    return (step >= lengths.astype(np.int64))[:, :, None]


def _store(batch: VertexBatch, name: str, sel: np.ndarray, values: np.ndarray) -> None:
    out = batch.output(name) if name == "out" else batch[name]
    flat = values.reshape(sel.size, -1)
    out[batch.offsets(name)[:-1][sel, None] + np.arange(flat.shape[1])] = flat


@functools.cache
def lstm_cell(
    dtype: Type,
    activations: tuple[Activation, ...],
    clip: float | None,
    input_forget: bool,
    peepholes: bool,
    masked: bool,
) -> type[Vertex]:
    """One LSTM step (ONNX gate order i, o, f, c; activations f, g, h)."""
    f, g, h = activations

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        for s, sel in alike_vertices(batch, _STATE):
            rows, units = s["rows"], s["units"]
            shapes = {
                "gatesIn": (rows, 4, units),
                "gatesRec": (rows, 4, units),
                "bias": (4, units),
                "peephole": (3, units),
                "cState": (rows, units),
                "hState": (rows, units),
            }
            names = ("gatesIn", "gatesRec", "bias", "cState", "hState") + (
                ("peephole",) if peepholes else ()
            )
            v = {k: a.astype(np.float32) for k, a in _blocks(batch, names, sel, shapes).items()}
            pre = v["gatesIn"] + v["gatesRec"] + v["bias"][:, None]
            c_prev, h_prev = v["cState"], v["hState"]
            if peepholes:
                pre[:, :, 0] += v["peephole"][:, None, 0] * c_prev
                pre[:, :, 2] += v["peephole"][:, None, 2] * c_prev
            if clip is not None:
                pre = np.clip(pre, -clip, clip)
            i = _act(f, pre[:, :, 0])
            forget = 1 - i if input_forget else _act(f, pre[:, :, 2])
            c = forget * c_prev + i * _act(g, pre[:, :, 3])
            o_pre = pre[:, :, 1] + (v["peephole"][:, None, 1] * c if peepholes else 0)
            if clip is not None and peepholes:
                o_pre = np.clip(o_pre, -clip, clip)
            hidden = _act(f, o_pre) * _act(h, c)
            ended = _ended(batch, sel, rows, s["step"]) if masked else None
            if ended is not None:
                c, hidden = np.where(ended[..., 0:1], c_prev, c), np.where(ended, h_prev, hidden)
            _store(batch, "cState", sel, c)
            _store(batch, "hState", sel, hidden)
            _store(batch, "out", sel, hidden if ended is None else np.where(ended, 0, hidden))

    per_unit = 3 * ACTIVATIONS[f[0]][1] + ACTIVATIONS[g[0]][1] + ACTIVATIONS[h[0]][1] + 8 * _MAC
    fields = {
        "gatesIn": Input(dtype),
        "gatesRec": Input(dtype),
        "bias": Input(dtype),
        "cState": InOut(dtype),
        "hState": InOut(dtype),
        "out": Output(dtype),
    }
    if peepholes:
        fields["peephole"] = Input(dtype)
    options = (clip, "inputForget" if input_forget else "", "peephole" if peepholes else "")
    return _register(
        "LstmCell", dtype, activations, options, fields, compute_batch, per_unit, masked
    )


@functools.cache
def gru_cell(
    dtype: Type, stage: str, activations: tuple[Activation, ...], clip: float | None, masked: bool
) -> type[Vertex]:
    """A GRU step (ONNX gate order z, r, h; activations f, g). ``stage`` "reset_after"
    (linear_before_reset: the whole step after one product with R), or "gates" then
    "candidate" around the product of ``r * h`` with the candidate's weights."""
    f, g = activations

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        for s, sel in alike_vertices(batch, _STATE):
            rows, units = s["rows"], s["units"]
            gates = 2 if stage == "gates" else 1 if stage == "candidate" else 3
            shapes = {
                "gatesIn": (rows, gates, units),
                "gatesRec": (rows, gates, units),
                "bias": (gates, units),
                "biasRec": (gates, units),
                "hState": (rows, units),
                "update": (rows, units),
            }
            names = ["gatesIn", "gatesRec", "bias", "hState"]
            names += ["biasRec"] if stage == "reset_after" else []
            names += ["update"] if stage == "candidate" else []
            v = {k: a.astype(np.float32) for k, a in _blocks(batch, names, sel, shapes).items()}
            h_prev = v["hState"]

            def clipped(x: np.ndarray) -> np.ndarray:
                return x if clip is None else np.clip(x, -clip, clip)

            if stage == "gates":
                pre = clipped(v["gatesIn"] + v["gatesRec"] + v["bias"][:, None])
                _store(batch, "update", sel, _act(f, pre[:, :, 0]))
                _store(batch, "out", sel, _act(f, pre[:, :, 1]) * h_prev)
                continue
            if stage == "candidate":
                z = v["update"]
                candidate = _act(
                    g,
                    clipped(v["gatesIn"][:, :, 0] + v["gatesRec"][:, :, 0] + v["bias"][:, None, 0]),
                )
            else:
                zr = clipped(
                    v["gatesIn"][:, :, :2]
                    + v["gatesRec"][:, :, :2]
                    + (v["bias"] + v["biasRec"])[:, None, :2]
                )
                z, r = _act(f, zr[:, :, 0]), _act(f, zr[:, :, 1])
                recurrent = v["gatesRec"][:, :, 2] + v["biasRec"][:, None, 2]
                candidate = _act(
                    g, clipped(v["gatesIn"][:, :, 2] + v["bias"][:, None, 2] + r * recurrent)
                )
            hidden = (1 - z) * candidate + z * h_prev
            ended = _ended(batch, sel, rows, s["step"]) if masked else None
            if ended is not None:
                hidden = np.where(ended, h_prev, hidden)
            _store(batch, "hState", sel, hidden)
            _store(batch, "out", sel, hidden if ended is None else np.where(ended, 0, hidden))

    fields = {
        "gatesIn": Input(dtype),
        "gatesRec": Input(dtype),
        "bias": Input(dtype),
        "hState": InOut(dtype) if stage != "gates" else Input(dtype),
        "out": Output(dtype),
    }
    if stage == "gates":
        fields["update"] = Output(dtype)
        per_unit = 2 * ACTIVATIONS[f[0]][1] + 3 * _MAC
    elif stage == "candidate":
        fields["update"] = Input(dtype)
        per_unit = ACTIVATIONS[g[0]][1] + 4 * _MAC
    else:
        fields["biasRec"] = Input(dtype)
        per_unit = 2 * ACTIVATIONS[f[0]][1] + ACTIVATIONS[g[0]][1] + 8 * _MAC
    name = {"gates": "GruGates", "candidate": "GruCandidate", "reset_after": "GruCell"}[stage]
    masked = masked and stage != "gates"
    return _register(name, dtype, activations, (clip,), fields, compute_batch, per_unit, masked)


def _register(
    name: str,
    dtype: Type,
    activations: tuple[Activation, ...],
    options: tuple,
    fields: dict,
    compute_batch: object,
    per_unit: float,
    masked: bool,
) -> type[Vertex]:
    """The codelet class, named by every choice it was made with (the engine finds a
    codelet by its type name: each variant needs its own)."""
    attrs = dict(fields)
    if masked:
        attrs["seqLen"] = Input(INT)
    attrs.update({k: State(UNSIGNED_INT, 0) for k in _STATE})
    acts = [
        n if n in ("Sigmoid", "Tanh", "Relu") else f"{n}({a:g},{b:g})" for n, a, b in activations
    ]
    extra = [f"clip={o:g}" if isinstance(o, float) else o for o in options if o]
    template = ",".join([dtype.name, *acts, *extra, *(["seqLen"] if masked else [])])
    attrs.update(
        type_name=f"popnn::{name}<{template}>",
        compute_batch=classmethod(compute_batch),
        cycles_per_unit=per_unit,
    )
    return register_builtin(type(name, (CellVertex,), attrs))
