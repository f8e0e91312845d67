"""Insights rule about number formats: the float32 weights the program's operations read,
and what storing them as half (FP16) would save, operation by operation."""

from __future__ import annotations

import numpy as np

from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Evidence, Finding, Severity
from profiler_core.insights.sources import source_ref, source_refs
from profiler_core.insights.weights import weight_reads

FP16_MIN_BYTES = 64 * 1024  # float32 weights below this in all are not worth a finding
OPERATIONS_SHOWN = 8  # operations listed one by one; the rest are summed on one line
NAMES_SHOWN = 5


def fp16_candidates(ctx: InsightsContext) -> list[Finding]:
    """Every float32 weight an operation reads (convolutions' weights and biases, matmuls'
    operands, gathers' tables), with the bytes each operation reads."""
    debug = ctx.debug
    if debug is None:
        return []
    graph = ctx.report.graph
    reads = weight_reads(graph, debug)
    total = reads.total_bytes
    if total < FP16_MIN_BYTES:
        return []
    ops, op_bytes, op_weights = reads.per_operation()
    labels = [s.label or "(no operation)" for s in source_refs(debug, ops[:OPERATIONS_SHOWN])]
    per_op = [
        Evidence(
            f"Read by {label}",
            f"{int(size):,} bytes in {int(count)} weight{'s' if count != 1 else ''}",
        )
        for label, size, count in zip(labels, op_bytes.tolist(), op_weights.tolist(), strict=False)
    ]
    if len(ops) > OPERATIONS_SHOWN:
        rest = op_bytes[OPERATIONS_SHOWN:]
        per_op.append(
            Evidence(f"Read by {len(rest):,} other operations", f"{int(rest.sum()):,} bytes")
        )
    order = np.lexsort((reads.var, -reads.bytes))
    names = graph.strings.take(graph.var_name[reads.var[order[:NAMES_SHOWN]]])
    return [
        Finding(
            rule="fp16-candidates",
            severity=Severity.WARNING if ctx.memory_tight else Severity.INFO,
            title=f"{len(reads):,} FP32 weights read by {len(ops):,} operations: half "
            f"precision would save {total // 2:,} bytes",
            evidence=(
                Evidence("FP32 bytes", total, "bytes"),
                Evidence("Saving in FP16", total // 2, "bytes"),
                Evidence("Tensors", ", ".join(names) + (", …" if len(reads) > NAMES_SHOWN else "")),
                *per_op,
            ),
            suggestion=_suggestion(ctx),
            source=source_ref(debug, int(ops[0])),  # the operation reading the most
            weight=float(total / 2 / max(int(ctx.table.total(True).sum()), 1)),
        )
    ]


def _suggestion(ctx: InsightsContext) -> str:
    store = (
        "Store these weights as half (FP16), and run the operations that read them in half: "
        "each weight then takes half its bytes on its tiles, and every exchange that moves "
        "it half the bytes"
    )
    if ctx.memory_tight:
        return f"{store}."
    fit = ctx.fit
    return (
        f"{store}. Memory is not short here (the fullest tile has {fit.headroom_bytes:,} "
        f"bytes free, {100 - fit.fullest_percent:.0f}% of a tile), so this is for a larger "
        "model or batch, or for speed: the AMP multiplies half at up to four times its "
        "float32 rate. Check the model's accuracy in half first."
    )
