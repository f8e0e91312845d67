"""PopLibs' ``popnn::gru::gruFwd``: a gated recurrent unit layer over a sequence, forward,
reverse or both directions at once, with an initial state and sequence lengths (ONNX GRU's
semantics; gates in ONNX's order z, r, h).

As the LSTM (``popnn/lstm.py``): the input projection of every step is one grouped matmul,
then each step is grouped matmuls with the recurrent weights and fused cell compute sets.
With ``reset_after`` (ONNX's linear_before_reset, PopLibs' resetAfter) a step is one
product with all of R and one ``GruCell``; otherwise the candidate's product needs the
reset gate first: ``GruGates`` (z, and r * h), the product of r * h with the candidate's
weights, then ``GruCandidate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ipu_engine import popops
from ipu_engine.codelets.rnn import Activation, gru_cell
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplin.matmul import mat_mul_grouped
from ipu_engine.popnn import rnn
from ipu_engine.popnn.lstm import check_activations, check_options
from ipu_engine.poputil.library_op import check_tensors, op_context

API = "popnn::gru::gruFwd"
DEFAULT_ACTIVATIONS: tuple[Activation, ...] = (("Sigmoid", 0.0, 0.0), ("Tanh", 0.0, 0.0))


def gru(
    graph: Graph,
    x: Tensor,
    weights_in: Tensor,
    weights_rec: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    *,
    bias_in: Tensor | None = None,
    bias_rec: Tensor | None = None,
    initial_h: Tensor | None = None,
    seq_lens: Tensor | None = None,
    reverse: Sequence[bool] = (False,),
    activations: Sequence[Sequence[Activation]] | None = None,
    clip: float | None = None,
    reset_after: bool = False,
    options: Mapping[str, Any] | None = None,
) -> tuple[Tensor, Tensor]:
    """``x`` [T, B, I] through D = len(``reverse``) directions: ``weights_in`` [D, I, 3H],
    ``weights_rec`` [D, H, 3H], biases [D, 3H] (input and recurrent), ``initial_h``
    [D, B, H], ``seq_lens`` [B]. Returns the outputs [T, D, B, H] in time order (zero past
    a sequence's end) and the last hidden state [D, B, H]. ``activations``: per direction
    (f, g) as (ONNX name, alpha, beta)."""
    extras = (bias_in, bias_rec, initial_h, seq_lens)
    check_tensors(graph, API, x, weights_in, weights_rec, *(t for t in extras if t is not None))
    reverse, clip, reset_after = check_options(API, reverse, clip, reset_after, "reset_after")
    rnn.check_sequence(API, x, [weights_in, weights_rec, *extras])
    steps, batch, size = x.shape
    directions, hidden = len(reverse), weights_rec.shape[1]
    for t, shape, what in (
        (weights_in, (directions, size, 3 * hidden), "input weights"),
        (weights_rec, (directions, hidden, 3 * hidden), "recurrent weights"),
        (bias_in, (directions, 3 * hidden), "input bias"),
        (bias_rec, (directions, 3 * hidden), "recurrent bias"),
        (initial_h, (directions, batch, hidden), "initial hidden state"),
        (seq_lens, (batch,), "sequence lengths"),
    ):
        rnn.expect_shape(API, t, shape, what)
    acts = check_activations(API, activations, directions, 2, DEFAULT_ACTIVATIONS)
    args = {
        "in": list(x.shape),
        "hidden": hidden,
        "directions": ["reverse" if r else "forward" for r in reverse],
        "sequenceLengths": seq_lens is not None,
        "resetAfter": reset_after,
        "clip": clip,
    }
    masked = seq_lens is not None
    with op_context(graph, API, debug_prefix, args) as debug_id:
        index = (
            rnn.reversal_index(graph, seq_lens, steps, prog) if masked and any(reverse) else None
        )
        projected = rnn.input_projection(graph, x, weights_in, prog, options)
        sequences = [
            rnn.in_step_order(graph, projected[d], r, index, prog, f"inputs{d}")
            for d, r in enumerate(reverse)
        ]
        plan = rnn.cell_plan(graph, directions, batch, hidden)
        h = rnn.state(graph, "h", plan, initial_h, x.type, prog, debug_id)
        outputs = graph.add_variable(x.type, [steps, directions, batch, hidden], "outputs")
        graph.set_tile_mapping_array(outputs, np.broadcast_to(plan.state_tiles(), outputs.shape))
        zero = rnn.zeros(graph, x.type, [directions, 3 * hidden], "bias")
        b_in = zero if bias_in is None else bias_in
        b_rec = zero if bias_rec is None else bias_rec
        rows = plan.positions(rnn.ROWS)
        common = {"hState": (h, rows)}
        if masked:
            common["seqLen"] = (seq_lens, plan.row_positions())
        if reset_after:
            cells = [gru_cell(x.type, "reset_after", a, clip, masked) for a in acts]
            fields = {
                **common,
                "bias": (b_in, plan.positions(rnn.GATES, 3)),
                "biasRec": (b_rec, plan.positions(rnn.GATES, 3)),
            }
        else:
            gates = [gru_cell(x.type, "gates", a, clip, masked) for a in acts]
            cells = [gru_cell(x.type, "candidate", a, clip, masked) for a in acts]
            update = graph.add_variable(x.type, [directions, batch, hidden], "update")
            reset_h = graph.add_variable(x.type, [directions, batch, hidden], "resetHidden")
            for t in (update, reset_h):
                graph.set_tile_mapping_array(t, plan.state_tiles())
            summed = (
                b_in
                if bias_rec is None
                else b_rec
                if bias_in is None
                else (popops.add(graph, b_in, b_rec, prog, "bias"))
            )
            fields = {
                "hState": (h, rows),
                "update": (update, rows),
                "out": (reset_h, rows),
                "bias": (summed[:, : 2 * hidden], plan.positions(rnn.GATES, 2)),
            }
        for step in range(steps):
            name = f"step{step}"
            inputs = rnn.step_inputs(sequences, step)
            if reset_after:
                recurrent = mat_mul_grouped(
                    graph, h, weights_rec, prog, f"{name}/recurrent", options
                )
                step_fields = {
                    **fields,
                    "gatesIn": (inputs, plan.positions(rnn.ROW_GATES, 3)),
                    "gatesRec": (recurrent, plan.positions(rnn.ROW_GATES, 3)),
                    "out": (outputs[step], rows),
                }
                rnn.cell_step(graph, cells, plan, step_fields, step, prog, debug_id, f"{name}/cell")
                continue
            zr = mat_mul_grouped(
                graph, h, weights_rec[:, :, : 2 * hidden], prog, f"{name}/recurrentGates", options
            )
            gate_fields = {
                **fields,
                "gatesIn": (inputs[:, :, : 2 * hidden], plan.positions(rnn.ROW_GATES, 2)),
                "gatesRec": (zr, plan.positions(rnn.ROW_GATES, 2)),
            }
            rnn.cell_step(graph, gates, plan, gate_fields, step, prog, debug_id, f"{name}/gates")
            candidate = mat_mul_grouped(
                graph,
                reset_h,
                weights_rec[:, :, 2 * hidden :],
                prog,
                f"{name}/recurrentCandidate",
                options,
            )
            cell_fields = {
                **common,
                "update": (update, rows),
                "gatesIn": (inputs[:, :, 2 * hidden :], plan.positions(rnn.ROW_GATES, 1)),
                "gatesRec": (candidate, plan.positions(rnn.ROW_GATES, 1)),
                "bias": (summed[:, 2 * hidden :], plan.positions(rnn.GATES, 1)),
                "out": (outputs[step], rows),
            }
            rnn.cell_step(graph, cells, plan, cell_fields, step, prog, debug_id, f"{name}/cell")
        return rnn.time_ordered(graph, outputs, reverse, index, prog), h
