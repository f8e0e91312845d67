"""The program of a traced function without pipeline stages: every replica side by side.

Per device iteration: one infeed copy per input (every replica's micro-batch at once),
the replicas' ops in shared compute sets (each replica on its own IPUs, so they run in
the same BSP steps), one outfeed copy per output. ``device_iterations`` > 1 wraps that
in an on-device ``Repeat``, as a framework's training loop on the device does.
"""

from __future__ import annotations

from collections.abc import Callable

from ipu_engine.frontend.builder import GraphBuilder, output_tensor
from ipu_engine.frontend.feeds import add_infeed, add_outfeed
from ipu_engine.frontend.fusion import FusingGraph, FusionRegion
from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.frontend.session import BuiltProgram, param_handles, place_sources
from ipu_engine.poplar.program import Repeat, Sequence


def build_replicated(
    graph: FusingGraph,
    trace: Trace,
    outputs: list[Node],
    replicas: int,
    ipus_per_replica: int,
    iterations: int,
    name: str,
    target_text: str = "",
) -> BuiltProgram:
    envs = place_sources(graph, trace, replicas, ipus_per_replica)
    params = param_handles(graph, trace.params, envs)
    infeeds, body = [], Sequence(name="deviceIteration" if iterations > 1 else "")
    for node in trace.inputs:
        feed, copy = add_infeed(graph, f"infeed{node.attrs['index']}", [e[node.id] for e in envs])
        infeeds.append(feed)
        body.add(copy)
    builders = build_replicas(graph, trace.nodes, envs, ipus_per_replica, target_text, body)
    outfeeds = []
    for j, node in enumerate(outputs):
        feed, copy = add_outfeed(graph, f"outfeed{j}", [output_tensor(b, node) for b in builders])
        outfeeds.append(feed)
        body.add(copy)
    main = Sequence(
        Repeat(iterations, body, name="deviceIterations") if iterations > 1 else body, name=name
    )
    return BuiltProgram(main, infeeds, outfeeds, iterations, params)


def build_replicas(
    graph: FusingGraph,
    nodes: list[Node],
    envs: list[dict],
    ipus_per_replica: int,
    target_text: str,
    prog: Sequence,
    then: Callable[[int, GraphBuilder, Sequence], None] | None = None,
) -> list[GraphBuilder]:
    """Every replica's ``nodes`` on its own IPUs, the replicas sharing compute sets, appended
    to ``prog``; ``then(replica, builder, lane_prog)`` adds more ops to each replica's lane."""
    region = FusionRegion(graph, "replicas")
    builders = []
    for r, env in enumerate(envs):
        with region.build_lane(f"replica{r}") as lane:
            builder = GraphBuilder(
                graph, lane.prog, env, r * ipus_per_replica, ipus_per_replica, target_text
            )
            builder.build(nodes)
            if then is not None:
                then(r, builder, lane.prog)
        builders.append(builder)
    for p in region.programs():
        prog.add(p)
    return builders
