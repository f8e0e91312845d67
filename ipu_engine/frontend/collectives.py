"""Cross-replica collectives: the all-reduce (sum) of gradients before a weight update.

A ring all-reduce, as the Graphcore Communication Library runs it: each replica's
tensors, flattened into one vector, are cut into R chunks. In R-1 reduce-scatter steps
every replica sends one chunk to the next replica round the ring, which adds it to its
own (a popops in-place add); then replica r holds the full sum of chunk r+1. In R-1
all-gather steps the summed chunks travel on round the ring. Each step is one Copy
(every replica's chunk moving at once over the IPU-Links) and, when reducing, one
compute set holding every replica's add.
"""

from __future__ import annotations

from ipu_engine import popops
from ipu_engine.common.errors import ShapeError
from ipu_engine.frontend.contexts import ALL_REDUCE, attribute
from ipu_engine.frontend.fusion import FusingGraph, FusionRegion, fused_copy
from ipu_engine.poplar.debug import name_scope
from ipu_engine.poplar.program import Copy, Sequence
from ipu_engine.poplar.tensor import Tensor, concat


def all_reduce_sum(
    graph: FusingGraph, per_replica: list[list[Tensor]], prog: Sequence, name: str = "allReduce"
) -> None:
    """``per_replica[r][i]`` becomes the sum over replicas of tensor i, on every replica."""
    replicas = len(per_replica)
    if replicas < 2:
        return
    shapes = [[t.shape for t in ts] for ts in per_replica]
    if any(s != shapes[0] for s in shapes):
        raise ShapeError(f"{name}: every replica must reduce tensors of the same shapes")
    flat = [concat([t.flatten() for t in ts]) for ts in per_replica]
    size = flat[0].num_elements
    bounds = [c * size // replicas for c in range(replicas + 1)]

    def chunk(replica: int, c: int) -> Tensor:
        c %= replicas
        return flat[replica].slice(bounds[c], bounds[c + 1])

    with name_scope(name), graph.debug.op(ALL_REDUCE, name) as context:
        for step in range(replicas - 1):
            # replica r sends chunk r-step to r+1, which adds it to its own
            sends = [(r, (r + 1) % replicas, r - step) for r in range(replicas)]
            sends = [(s, d, c) for s, d, c in sends if chunk(s, c).num_elements]
            recv = []
            for src, dst, c in sends:
                target = chunk(dst, c)
                buffer = graph.clone(target, f"reduceScatter{step}/recv{dst}")
                recv.append((target, buffer, Copy(chunk(src, c), buffer)))
            if not recv:
                continue
            exchange = fused_copy([copy for _, _, copy in recv], f"reduceScatter{step}/exchange")
            prog.add(attribute(exchange, context))
            region = FusionRegion(graph, f"{name}/reduceScatter{step}")
            for target, buffer, _ in recv:
                with region.build_lane() as lane:
                    popops.add_in_place(graph, target, buffer, lane.prog, f"reduceScatter{step}")
            for p in region.programs():
                prog.add(p)
        for step in range(replicas - 1):
            # replica r holds the sum of chunk r+1-step: pass it on to r+1
            copies = [
                Copy(chunk(r, r + 1 - step), chunk((r + 1) % replicas, r + 1 - step))
                for r in range(replicas)
                if chunk(r, r + 1 - step).num_elements
            ]
            if copies:
                prog.add(attribute(fused_copy(copies, f"allGather{step}/exchange"), context))
