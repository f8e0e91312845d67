"""Pipelined execution: stages on their own IPUs working on different micro-batches at once.

Micro-batch m enters stage s at time step m + s. At each time step the active stages'
ops share compute sets (see ``fusion``), so in the steady state one Execute holds the
vertices of every stage, each on its IPU with its own micro-batch; ramp-up and
ramp-down steps hold only the stages that have data. A time step is: the infeed copy
(when stage 0 is active), the fused compute, one Copy moving every stage's results to
the next stage's receive buffers over the IPU-Links, and the outfeed copies of stages
that finished a micro-batch. Identical consecutive steps (the steady state) are one
``Repeat``, as the frameworks' pipelines are.

A value used several stages after it is made is carried through every stage between,
one hop per step, so it arrives with its micro-batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ipu_engine.common.errors import GraphError
from ipu_engine.frontend.builder import GraphBuilder, output_tensor
from ipu_engine.frontend.contexts import (
    IPU_COPY,
    PIPELINE_LAYER,
    attribute,
    framework_op,
    pipeline_op,
)
from ipu_engine.frontend.feeds import Feed, add_infeed, add_outfeed
from ipu_engine.frontend.fusion import FusingGraph, FusionRegion, Lane, fused_copy
from ipu_engine.frontend.ir import SOURCE_OPS, Node, Trace
from ipu_engine.frontend.session import BuiltProgram, param_handles, place_sources
from ipu_engine.poplar.program import Copy, Program, Repeat, Sequence
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.virtual_graph import ipu_tiles
from ipu_engine.poputil import linear_tile_array


def is_pipelined(trace: Trace) -> bool:
    return any(n.stage >= 0 for n in trace.nodes if n.op not in SOURCE_OPS)


def pipeline_stages(trace: Trace) -> int:
    """How many pipeline stages the traced program has (0 when it is not pipelined)."""
    return max((n.stage for n in trace.nodes if n.op not in SOURCE_OPS), default=-1) + 1


@dataclass(frozen=True)
class TimeStep:
    """A run of identical time steps: the stages active in each, and how many there are."""

    label: str
    stages: tuple[int, ...]
    count: int


def schedule(num_stages: int, micro_batches: int) -> list[TimeStep]:
    """Ramp-up, steady state and ramp-down of ``micro_batches`` through the stages."""
    runs: list[TimeStep] = []
    ups = downs = 0
    for t in range(micro_batches + num_stages - 1):
        stages = tuple(s for s in range(num_stages) if 0 <= t - s < micro_batches)
        if runs and runs[-1].stages == stages:
            runs[-1] = TimeStep(runs[-1].label, stages, runs[-1].count + 1)
            continue
        if len(stages) == num_stages:
            label = "steadyState"
        elif 0 in stages:
            label, ups = f"rampUp{ups}", ups + 1
        else:
            label, downs = f"rampDown{downs}", downs + 1
        runs.append(TimeStep(label, stages, 1))
    return runs


class PipelineStages:
    """Which stage each value belongs to, the values crossing each stage boundary, and the
    IPU each stage (and each receive buffer) lives on.

    ``stage_of`` maps an op to its stage (default: the stage it was traced in); ``home``
    gives a stage's IPU within its replica (default: the shard of its first op).
    """

    def __init__(
        self,
        trace: Trace,
        stage_of: Callable[[Node], int] | None = None,
        home: Callable[[int], int] | None = None,
    ) -> None:
        stage_of = stage_of or (lambda n: max(n.stage, 0))
        self.ops = [n for n in trace.nodes if n.op not in SOURCE_OPS]
        self.stage = {n.id: stage_of(n) for n in self.ops} | {n.id: 0 for n in trace.inputs}
        self.count = max(self.stage.values(), default=0) + 1
        users: dict[int, set[int]] = {}
        for node in self.ops:
            for i in node.inputs:
                if i.op in ("const", "param"):
                    continue
                if self.stage[i.id] > self.stage[node.id]:
                    raise GraphError(
                        f"{node.where()}: pipeline stage {self.stage[node.id]} uses "
                        f"{i.describe()} made in the later stage {self.stage[i.id]} "
                        f"({i.where()}); data only flows to later stages"
                    )
                users.setdefault(i.id, set()).add(self.stage[node.id])
        first_shard = {}
        for node in reversed(self.ops):
            first_shard[self.stage[node.id]] = node.shard
        self.home = [
            home(s) if home is not None else first_shard.get(s, 0) for s in range(self.count)
        ]
        # A value used k stages after it is made is carried one stage per step, in a chain
        # of buffers on the IPU that uses it -- one chain per such IPU, so a value kept for
        # a later stage on its own IPU (an activation for the backward pass) never leaves it.
        self.carried: dict[int, list[tuple[Node, int]]] = {b: [] for b in range(1, self.count)}
        for v in [*trace.inputs, *self.ops]:
            made = self.stage[v.id]
            reach: dict[int, int] = {}  # IPU -> the last stage there that uses v
            for u in users.get(v.id, ()):
                if u > made:
                    reach[self.home[u]] = max(reach.get(self.home[u], u), u)
            for ipu, last in sorted(reach.items()):
                for b in range(made + 1, last + 1):
                    self.carried[b].append((v, ipu))

    def nodes_of(self, stage: int) -> list[Node]:
        return [n for n in self.ops if self.stage[n.id] == stage]


#: Called in each lane after its ops are built: (replica, stage, builder, lane program).
LaneHook = Callable[[int, int, GraphBuilder, Sequence], None]


@dataclass
class PipelineParts:
    """A pipeline's time steps in order, and what the program around it needs."""

    runs: list[TimeStep]
    steps: list[Program]
    builders: dict[tuple[int, int], GraphBuilder]
    infeeds: list[Feed]
    outfeeds: list[Feed]


def build_pipeline(
    graph: FusingGraph,
    trace: Trace,
    outputs: list[Node],
    replicas: int,
    ipus_per_replica: int,
    micro_batches: int,
    name: str,
    target_text: str = "",
) -> BuiltProgram:
    """An inference pipeline: ``micro_batches`` per run, each output outfed per micro-batch."""
    stages = PipelineStages(trace)
    envs = place_sources(graph, trace, replicas, ipus_per_replica, input_shard=stages.home[0])
    params = param_handles(graph, trace.params, envs)
    parts = build_pipeline_steps(
        graph,
        stages,
        envs,
        [(f"infeed{n.attrs['index']}", n) for n in trace.inputs],
        [(f"outfeed{j}", n) for j, n in enumerate(outputs)],
        ipus_per_replica,
        micro_batches,
        target_text,
    )
    main = Sequence(*parts.steps, name=name)
    extra = {"schedule": parts.runs}
    return BuiltProgram(main, parts.infeeds, parts.outfeeds, micro_batches, params, extra)


def build_pipeline_steps(
    graph: FusingGraph,
    stages: PipelineStages,
    envs: list[dict[int, Tensor]],
    inputs: list[tuple[str, Node]],
    outputs: list[tuple[str, Node]],
    ipus_per_replica: int,
    micro_batches: int,
    target_text: str = "",
    lane_hook: LaneHook | None = None,
) -> PipelineParts:
    """Every lane (replica, stage) built once, the time steps of the schedule, the feeds."""
    replicas = len(envs)
    recv = [_receive_buffers(graph, stages, r * ipus_per_replica) for r in range(replicas)]
    builders: dict[tuple[int, int], GraphBuilder] = {}
    lanes: dict[tuple[int, int], Lane] = {}
    runs = schedule(stages.count, micro_batches)
    steps: dict[str, list[Program]] = {}
    phases: dict[str, int] = {}  # each time step's debug context: an operation of its own
    # the steady state is built first, so its compute sets carry the ops' own names
    for run in sorted(runs, key=lambda r: len(r.stages) != stages.count):
        op, stages_arg = pipeline_op(run.label), {"stages": list(run.stages)}
        phase = framework_op(graph, op, run.label, stages_arg, PIPELINE_LAYER)
        region = FusionRegion(graph, f"pipeline/{run.label}", phase)
        phases[run.label] = phase
        for r in range(replicas):
            for s in run.stages:
                if (r, s) in lanes:
                    region.add_clone(lanes[(r, s)], run.label)
                    continue
                env = dict(envs[r]) | _stage_inputs(stages, recv[r], s)
                with region.build_lane(f"replica{r}/stage{s}") as lane:
                    builder = GraphBuilder(
                        graph, lane.prog, env, r * ipus_per_replica, ipus_per_replica, target_text
                    )
                    builder.build(stages.nodes_of(s))
                    if lane_hook is not None:
                        lane_hook(r, s, builder, lane.prog)
                builders[(r, s)], lanes[(r, s)] = builder, lane
        steps[run.label] = region.programs()
    infeeds, infeed_copies = [], []
    for feed_name, node in inputs:
        feed, copy = add_infeed(graph, feed_name, [e[node.id] for e in envs])
        infeeds.append(feed)
        infeed_copies.append(copy)
    outfeeds, outfeed_copies = [], []
    for feed_name, node in outputs:
        stage = stages.stage.get(node.id, 0)
        tensors = [output_tensor(builders[(r, stage)], node) for r in range(replicas)]
        feed, copy = add_outfeed(graph, feed_name, tensors)
        outfeeds.append(feed)
        outfeed_copies.append((stage, copy))
    ordered: list[Program] = []
    for run in runs:
        step = Sequence(name=run.label if run.count == 1 else "timeStep")
        if 0 in run.stages:
            for copy in infeed_copies:
                step.add(copy)
        for program in steps[run.label]:
            step.add(attribute(program, phases[run.label]))
        boundary = _boundary_copies(stages, run.stages, builders, recv, replicas)
        if boundary:  # the copies between IPUs are an op of their own, run in the phase
            args = {"stages": list(run.stages)}
            exchange = framework_op(graph, IPU_COPY, "stageExchange", args, PIPELINE_LAYER)
            step.add(attribute(boundary, exchange))
        for stage, copy in outfeed_copies:
            if stage in run.stages:
                step.add(copy)
        step = Repeat(run.count, step, name=run.label) if run.count > 1 else step
        step.debug_id = phases[run.label]
        ordered.append(step)
    return PipelineParts(runs, ordered, builders, infeeds, outfeeds)


def _receive_buffers(
    graph: FusingGraph, stages: PipelineStages, ipu_offset: int
) -> dict[int, dict[tuple[int, int], Tensor]]:
    """For each stage boundary, a buffer for every (value, IPU) carried across it."""
    buffers: dict[int, dict[tuple[int, int], Tensor]] = {}
    for b, carried in stages.carried.items():
        for v, ipu in carried:
            tiles = ipu_tiles(graph, ipu_offset + ipu, "pipeline stage IPU")
            t = graph.add_variable(v.type, v.shape, f"stage{b}/recv/{v.name}")
            graph.set_tile_mapping_array(t, linear_tile_array(t.num_elements, tiles))
            buffers.setdefault(b, {})[(v.id, ipu)] = t
    return buffers


def _stage_inputs(
    stages: PipelineStages, recv: dict[int, dict[tuple[int, int], Tensor]], stage: int
) -> dict[int, Tensor]:
    """The values stage ``stage`` reads from its receive buffers (those on its IPU)."""
    home = stages.home[stage]
    return {v: t for (v, ipu), t in recv.get(stage, {}).items() if ipu == home}


def _boundary_copies(
    stages: PipelineStages,
    active: tuple[int, ...],
    builders: dict[tuple[int, int], GraphBuilder],
    recv: list[dict[int, dict[tuple[int, int], Tensor]]],
    replicas: int,
) -> Copy | Sequence | None:
    """Every active stage's results to the next stage, as one Copy per element type.

    A Copy reads all its sources before writing, so a value carried on (the receive
    buffer of stage b sent to stage b+1) leaves before the next one lands there.
    """
    by_type: dict[object, list[Copy]] = {}
    for b, carried in stages.carried.items():
        if b - 1 not in active:
            continue
        for r in range(replicas):
            for v, ipu in carried:
                made_here = stages.stage[v.id] == b - 1
                src = builders[(r, b - 1)].env[v.id] if made_here else recv[r][b - 1][(v.id, ipu)]
                by_type.setdefault(v.type, []).append(Copy(src, recv[r][b][(v.id, ipu)]))
    copies = [fused_copy(group, "pipeline/stageExchange") for group in by_type.values()]
    if not copies:
        return None
    return copies[0] if len(copies) == 1 else Sequence(*copies)
