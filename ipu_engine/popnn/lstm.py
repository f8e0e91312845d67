"""PopLibs' ``popnn::lstm::lstmFwd``: a long short-term memory layer over a sequence, forward,
reverse or both directions at once, with initial states, peepholes and sequence lengths
(ONNX LSTM's semantics; gates in ONNX's order i, o, f, c).

Every step's input projection is one grouped matmul up front; then each step is a grouped
matmul of the hidden state with the recurrent weights (the directions are its groups) and
one ``LstmCell`` compute set fusing the gates and the state update. The steps are unrolled
in the program (PopLibs loops over them with dynamic slices: the same compute sets and
cycles, less control code).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ipu_engine.codelets.rnn import ACTIVATIONS, Activation, lstm_cell
from ipu_engine.common.arguments import flag_arg, number_arg, sequence_arg
from ipu_engine.common.errors import ShapeError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplin.matmul import mat_mul_grouped
from ipu_engine.popnn import rnn
from ipu_engine.poputil.library_op import check_tensors, op_context

API = "popnn::lstm::lstmFwd"
DEFAULT_ACTIVATIONS: tuple[Activation, ...] = (
    ("Sigmoid", 0.0, 0.0),
    ("Tanh", 0.0, 0.0),
    ("Tanh", 0.0, 0.0),
)


def check_activations(api: str, activations: Any, directions: int, count: int,
                      default: tuple[Activation, ...]) -> list[tuple[Activation, ...]]:  # fmt: skip
    """Per direction, ``count`` activations as (ONNX name, alpha, beta)."""
    if activations is None:
        return [default] * directions
    what = f"{api}: activations (per direction, {count} of (name, alpha, beta))"
    per_direction = sequence_arg(activations, what, ShapeError)
    checked = []
    for acts in per_direction:
        items = sequence_arg(acts, what, ShapeError)
        try:
            resolved = tuple((n, float(a), float(b)) for n, a, b in items)
        except (TypeError, ValueError):
            raise ShapeError(f"{what}: got {acts!r}") from None
        if len(resolved) != count or any(
            not isinstance(n, str) or n not in ACTIVATIONS for n, _, _ in resolved
        ):
            raise ShapeError(f"{what}: each one of {sorted(ACTIVATIONS)}, got {acts!r}")
        checked.append(resolved)
    if len(checked) != directions:
        raise ShapeError(f"{what}: {directions} direction(s), got {len(checked)}")
    return checked


def check_options(api: str, reverse: Any, clip: Any, flag: Any, flag_name: str) -> tuple:
    """(the directions' reverse flags, clip or None, the layer's switch)."""
    directions = [
        flag_arg(r, f"{api}: reverse (a flag per direction)", ShapeError)
        for r in sequence_arg(reverse, f"{api}: reverse (a flag per direction)", ShapeError)
    ]
    if len(directions) not in (1, 2):
        raise ShapeError(f"{api}: reverse names 1 or 2 directions, got {len(directions)}")
    if clip is not None:
        clip = number_arg(clip, f"{api}: clip", ShapeError)
        if not np.isfinite(clip) or clip <= 0:
            raise ShapeError(f"{api}: clip must be a positive number, got {clip}")
    return tuple(directions), clip, flag_arg(flag, f"{api}: {flag_name}", ShapeError)


def lstm(
    graph: Graph,
    x: Tensor,
    weights_in: Tensor,
    weights_rec: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    *,
    bias: Tensor | None = None,
    initial_h: Tensor | None = None,
    initial_c: Tensor | None = None,
    peepholes: Tensor | None = None,
    seq_lens: Tensor | None = None,
    reverse: Sequence[bool] = (False,),
    activations: Sequence[Sequence[Activation]] | None = None,
    clip: float | None = None,
    input_forget: bool = False,
    options: Mapping[str, Any] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """``x`` [T, B, I] through D = len(``reverse``) directions: ``weights_in`` [D, I, 4H],
    ``weights_rec`` [D, H, 4H], ``bias`` [D, 4H], initial states [D, B, H], ``peepholes``
    [D, 3H] (i, o, f), ``seq_lens`` [B] (integers, at most T). Returns the outputs
    [T, D, B, H] in time order (zero past a sequence's end) and the last hidden and cell
    states [D, B, H]. ``activations``: per direction (f, g, h) as (ONNX name, alpha, beta)."""
    extras = (bias, initial_h, initial_c, peepholes, seq_lens)
    check_tensors(graph, API, x, weights_in, weights_rec, *(t for t in extras if t is not None))
    reverse, clip, input_forget = check_options(API, reverse, clip, input_forget, "input_forget")
    rnn.check_sequence(API, x, [weights_in, weights_rec, *extras])
    steps, batch, size = x.shape
    directions, hidden = len(reverse), weights_rec.shape[1]
    for t, shape, what in (
        (weights_in, (directions, size, 4 * hidden), "input weights"),
        (weights_rec, (directions, hidden, 4 * hidden), "recurrent weights"),
        (bias, (directions, 4 * hidden), "bias"),
        (initial_h, (directions, batch, hidden), "initial hidden state"),
        (initial_c, (directions, batch, hidden), "initial cell state"),
        (peepholes, (directions, 3 * hidden), "peepholes"),
        (seq_lens, (batch,), "sequence lengths"),
    ):
        rnn.expect_shape(API, t, shape, what)
    acts = check_activations(API, activations, directions, 3, DEFAULT_ACTIVATIONS)
    args = {
        "in": list(x.shape),
        "hidden": hidden,
        "directions": ["reverse" if r else "forward" for r in reverse],
        "sequenceLengths": seq_lens is not None,
        "peepholes": peepholes is not None,
        "clip": clip,
        "inputForget": input_forget,
    }
    with op_context(graph, API, debug_prefix, args) as debug_id:
        index = None
        if seq_lens is not None and any(reverse):
            index = rnn.reversal_index(graph, seq_lens, steps, prog)
        projected = rnn.input_projection(graph, x, weights_in, prog, options)
        sequences = [
            rnn.in_step_order(graph, projected[d], r, index, prog, f"inputs{d}")
            for d, r in enumerate(reverse)
        ]
        plan = rnn.cell_plan(graph, directions, batch, hidden)
        h = rnn.state(graph, "h", plan, initial_h, x.type, prog, debug_id)
        c = rnn.state(graph, "c", plan, initial_c, x.type, prog, debug_id)
        outputs = graph.add_variable(x.type, [steps, directions, batch, hidden], "outputs")
        graph.set_tile_mapping_array(outputs, np.broadcast_to(plan.state_tiles(), outputs.shape))
        codelets = [
            lstm_cell(
                x.type,
                a,
                None if clip is None else float(clip),
                bool(input_forget),
                peepholes is not None,
                seq_lens is not None,
            )
            for a in acts
        ]
        fields = {
            "bias": (
                bias
                if bias is not None
                else rnn.zeros(graph, x.type, [directions, 4 * hidden], "bias"),
                plan.positions(rnn.GATES, 4),
            ),
            "cState": (c, plan.positions(rnn.ROWS)),
            "hState": (h, plan.positions(rnn.ROWS)),
        }
        if peepholes is not None:
            fields["peephole"] = (peepholes, plan.positions(rnn.GATES, 3))
        if seq_lens is not None:
            fields["seqLen"] = (seq_lens, plan.row_positions())
        gate_positions = plan.positions(rnn.ROW_GATES, 4)
        for step in range(steps):
            recurrent = mat_mul_grouped(
                graph, h, weights_rec, prog, f"step{step}/recurrent", options
            )
            step_fields = {
                **fields,
                "gatesIn": (rnn.step_inputs(sequences, step), gate_positions),
                "gatesRec": (recurrent, gate_positions),
                "out": (outputs[step], plan.positions(rnn.ROWS)),
            }
            rnn.cell_step(
                graph, codelets, plan, step_fields, step, prog, debug_id, f"step{step}/cell"
            )
        return rnn.time_ordered(graph, outputs, reverse, index, prog), h, c
