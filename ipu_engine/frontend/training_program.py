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

A pipelined model (``nn.begin_block`` stages) replaces the accumulation loop by a pipeline
of its forward and backward stages over the ``gradient_accumulation`` micro-batches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine import popops
from ipu_engine.frontend.builder import GraphBuilder, output_tensor
from ipu_engine.frontend.collectives import all_reduce_sum
from ipu_engine.frontend.feeds import add_infeed, add_outfeed
from ipu_engine.frontend.fusion import FusingGraph, FusionRegion
from ipu_engine.frontend.ir import SOURCE_OPS, Node, Trace
from ipu_engine.frontend.optim import SGD
from ipu_engine.frontend.pipeline import PipelineStages, build_pipeline_steps
from ipu_engine.frontend.replicated import build_replicas
from ipu_engine.frontend.session import BuiltProgram, param_handles, place_sources
from ipu_engine.poplar.debug import name_scope
from ipu_engine.poplar.program import Copy, Program, Repeat, Sequence
from ipu_engine.poplar.tensor import Tensor


@dataclass
class TracedTraining:
    trace: Trace
    loss: Node
    grads: dict[str, Node]  # weight name -> its gradient
    loss_from: int  # the first node of the loss: the model's forward pass is before it


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

    def gradient_sums(r: int, builder: GraphBuilder, lane_prog: Sequence) -> None:
        accumulators.append(
            _gradient_sums(graph, builder, traced, params, r, accumulation, lane_prog)
        )

    builders = build_replicas(
        graph, trace.nodes, envs, ipus_per_replica, target_text, micro_step, gradient_sums
    )
    loss_feed, loss_copy = add_outfeed(
        graph, "loss", [output_tensor(b, traced.loss).reshape([1]) for b in builders]
    )
    micro_step.add(loss_copy)

    step = Sequence(name="trainingStep")
    if accumulation > 1:
        _zero(graph, step, accumulators)
        step.add(Repeat(accumulation, micro_step, name="gradientAccumulation"))
    else:
        step.add(micro_step)
    _reduce_and_update(graph, step, optimizer, params, accumulators, accumulation)
    main = Sequence(
        Repeat(iterations, step, name="deviceIterations") if iterations > 1 else step, name=name
    )
    return BuiltProgram(main, infeeds, [loss_feed], iterations * accumulation, params)


def build_pipelined_training(
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
    """Pipelined training, GPipe-style: the forward of each of S stages and its backward are
    two pipeline stages on the same IPU (2S in all, the backward ones in reverse order), so
    a steady-state step runs stage s's forward of one micro-batch and its backward of an
    earlier one side by side. The activations a backward needs wait on their IPU, carried
    one step at a time (a FIFO stash). The ``gradient_accumulation`` micro-batches of an
    update flow through, their gradients accumulating; then all-reduce and update.
    """
    trace = traced.trace
    forward = [n for n in trace.nodes[: traced.loss_from] if n.op not in SOURCE_OPS]
    count = max((max(n.stage, 0) for n in forward), default=0) + 1
    first_shard: dict[int, int] = {}
    for node in reversed(forward):
        first_shard[max(node.stage, 0)] = node.shard

    def stage_of(node: Node) -> int:
        stage = max(node.stage, 0)
        return stage if node.id < traced.loss_from else 2 * count - 1 - stage

    def home(stage: int) -> int:
        return first_shard.get(stage if stage < count else 2 * count - 1 - stage, 0)

    stages = PipelineStages(trace, stage_of, home)
    envs = place_sources(graph, trace, replicas, ipus_per_replica, input_shard=stages.home[0])
    params = param_handles(graph, trace.params, envs)
    accumulators = [
        {n: graph.clone(params[n][r], f"{n}/accumulator") for n in traced.grads}
        for r in range(replicas)
    ]
    made_in: dict[int, list[str]] = {}
    for n, grad in traced.grads.items():
        made_in.setdefault(stages.stage[grad.id], []).append(n)

    def accumulate(replica: int, stage: int, builder: GraphBuilder, prog: Sequence) -> None:
        with name_scope("gradientAccumulation"):
            for n in made_in.get(stage, []):
                grad = builder.env[traced.grads[n].id]
                popops.add_in_place(graph, accumulators[replica][n], grad, prog, f"{n}/accumulate")

    parts = build_pipeline_steps(
        graph,
        stages,
        envs,
        [(n.name, n) for n in trace.inputs],
        [("loss", traced.loss)],
        ipus_per_replica,
        accumulation,
        target_text,
        accumulate,
    )
    step = Sequence(name="trainingStep")
    _zero(graph, step, accumulators)
    step.add(Sequence(*parts.steps, name="pipeline"))
    _reduce_and_update(graph, step, optimizer, params, accumulators, accumulation)
    main = Sequence(
        Repeat(iterations, step, name="deviceIterations") if iterations > 1 else step, name=name
    )
    extra = {"schedule": parts.runs}
    return BuiltProgram(
        main, parts.infeeds, parts.outfeeds, iterations * accumulation, params, extra
    )


def _zero(graph: FusingGraph, prog: Sequence, accumulators: list[dict[str, Tensor]]) -> None:
    with name_scope("gradientAccumulation"):
        _per_replica(graph, prog, "zero", accumulators, popops.zero)


def _reduce_and_update(
    graph: FusingGraph,
    prog: Sequence,
    optimizer: SGD,
    params: dict[str, list[Tensor]],
    sums: list[dict[str, Tensor]],
    accumulation: int,
) -> None:
    """All-reduce every replica's gradient sums, then the optimizer's step on every replica."""
    names = list(sums[0])
    all_reduce_sum(graph, [[acc[n] for n in names] for acc in sums], prog)
    count = accumulation * len(sums)
    with name_scope("optimizer"):
        _per_replica(
            graph,
            prog,
            "update",
            [{n: (params[n][r], acc[n]) for n in names} for r, acc in enumerate(sums)],
            lambda g, pair, p, n: optimizer.update(g, pair[0], pair[1], count, p, n),
        )


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
