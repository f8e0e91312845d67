"""The training program: forward and backward per micro-batch, gradients accumulated,
all-reduced across replicas, and one weight update per device iteration.

    Repeat(device_iterations):            # on-device loop, one weight update each
        zero the gradient accumulators    # (gradient_accumulation > 1)
        Repeat(gradient_accumulation):
            infeed x, labels              # every replica's micro-batch in one copy
            forward + backward            # replicas side by side in shared compute sets
            accumulate gradients          # popops add in place
            outfeed the loss
        all-reduce the gradients          # ring over the replicas (replication_factor > 1)
        weight update                     # popops scaledAddTo, the optimizer's step
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine import popops
from ipu_engine.debug import name_scope
from ipu_engine.frontend.builder import GraphBuilder, output_tensor
from ipu_engine.frontend.collectives import all_reduce_sum
from ipu_engine.frontend.feeds import add_infeed, add_outfeed
from ipu_engine.frontend.fusion import FusingGraph, FusionRegion
from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.frontend.optim import SGD
from ipu_engine.frontend.session import BuiltProgram, param_handles, place_sources
from ipu_engine.program import Copy, Program, Repeat, Sequence
from ipu_engine.tensor import Tensor


@dataclass
class TracedTraining:
    trace: Trace
    loss: Node
    grads: dict[str, Node]  # weight name -> its gradient


def build_training(
    graph: FusingGraph,
    traced: TracedTraining,
    optimizer: SGD,
    replicas: int,
    ipus_per_replica: int,
    accumulation: int,
    iterations: int,
    name: str,
    target_text: str = "",
) -> BuiltProgram:
    trace = traced.trace
    envs = place_sources(graph, trace, replicas, ipus_per_replica)
    params = param_handles(graph, trace.params, envs)
    micro_step = Sequence(name="microBatch" if accumulation > 1 else "")
    infeeds = []
    for node in trace.inputs:
        feed, copy = add_infeed(graph, node.name, [e[node.id] for e in envs])
        infeeds.append(feed)
        micro_step.add(copy)
    accumulators: list[dict[str, Tensor]] = []
    region = FusionRegion(graph, "replicas")
    builders = []
    for r in range(replicas):
        with region.build_lane(f"replica{r}") as lane:
            builder = GraphBuilder(
                graph, lane.prog, envs[r], r * ipus_per_replica, ipus_per_replica, target_text
            )
            builder.build(trace.nodes)
            sums = _gradient_sums(graph, builder, traced, params, r, accumulation, lane.prog)
        builders.append(builder)
        accumulators.append(sums)
    for p in region.programs():
        micro_step.add(p)
    loss_feed, loss_copy = add_outfeed(
        graph, "loss", [output_tensor(b, traced.loss).reshape([1]) for b in builders]
    )
    micro_step.add(loss_copy)

    step = Sequence(name="trainingStep")
    if accumulation > 1:
        with name_scope("gradientAccumulation"):
            _per_replica(graph, step, "zero", accumulators, popops.zero)
        step.add(Repeat(accumulation, micro_step, name="gradientAccumulation"))
    else:
        step.add(micro_step)
    names = list(traced.grads)
    all_reduce_sum(graph, [[acc[n] for n in names] for acc in accumulators], step)
    with name_scope("optimizer"):
        count = accumulation * replicas
        _per_replica(
            graph,
            step,
            "update",
            [{n: (params[n][r], acc[n]) for n in names} for r, acc in enumerate(accumulators)],
            lambda g, pair, p, n: optimizer.update(g, pair[0], pair[1], count, p, n),
        )
    main = Sequence(
        Repeat(iterations, step, name="deviceIterations") if iterations > 1 else step, name=name
    )
    return BuiltProgram(main, infeeds, [loss_feed], iterations * accumulation, params)


def _gradient_sums(
    graph: FusingGraph,
    builder: GraphBuilder,
    traced: TracedTraining,
    params: dict[str, list[Tensor]],
    replica: int,
    accumulation: int,
    prog: Sequence,
) -> dict[str, Tensor]:
    """Where each weight's gradient is summed: accumulators (zeroed per update) when several
    micro-batches make one update, else the gradient itself (in a tensor of its own)."""
    sums = {}
    for name, node in traced.grads.items():
        grad = builder.env[node.id]
        weight = params[name][replica]
        if accumulation > 1:
            acc = graph.clone(weight, f"{name}/accumulator")
            with name_scope("gradientAccumulation"):
                popops.add_in_place(graph, acc, grad, prog, f"{name}/accumulate")
            sums[name] = acc
        elif np.unique(grad.flat_addr()).size != grad.num_elements or grad.shape != weight.shape:
            own = graph.clone(weight, f"{name}/grad")
            prog.add(Copy(grad, own))
            sums[name] = own
        else:
            sums[name] = grad
    return sums


def _per_replica(graph: FusingGraph, prog: Sequence, what: str, items: list[dict], op) -> None:  # noqa: ANN001
    """``op`` on every replica's items, the replicas sharing compute sets."""
    region = FusionRegion(graph, what)
    for r, per_name in enumerate(items):
        with region.build_lane(f"replica{r}") as lane:
            for name, item in per_name.items():
                op(graph, item, lane.prog, f"{name}/{what}")
    programs: list[Program] = region.programs()
    for p in programs:
        prog.add(p)
