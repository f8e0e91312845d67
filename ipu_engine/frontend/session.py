"""A compiled framework program on its device: the Engine, its feeds and its weights.

``place_sources`` puts every replica's inputs and weights on that replica's IPUs (an
input on the IPU of its first user, a weight on the shard it was made on, laid out for
the matmul reading it when the trace asks for op layouts, else linearly);
``DeviceSession`` compiles and loads the Engine once, then each call connects the host
arrays to the feeds, runs, and returns the outfeeds' arrays.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ipu_engine.frontend.feeds import Feed, host_input
from ipu_engine.frontend.ir import Node, Trace
from ipu_engine.frontend.weight_layout import create_weight, weight_readers
from ipu_engine.poplar.debug import source_location
from ipu_engine.poplar.engine import Engine
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Program
from ipu_engine.poplar.report.autoreport import GraphRecord
from ipu_engine.poplar.target import Device
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.virtual_graph import ipu_tiles
from ipu_engine.poputil import linear_tile_array


@dataclass
class BuiltProgram:
    """What a program builder returns: the program and the host ends it needs."""

    program: Program
    infeeds: list[Feed]
    outfeeds: list[Feed]
    copies_per_run: int  # outfeed copies each run makes per feed
    params: dict[str, list[Tensor]] = field(default_factory=dict)  # name -> per replica
    extra: dict[str, object] = field(default_factory=dict)


def home_shards(trace: Trace) -> dict[int, int]:
    """The shard each input and weight lives on: an input goes where it is first used."""
    users = trace.consumers()
    homes = {}
    for node in (*trace.inputs, *trace.params.values()):
        first = users.get(node.id)
        homes[node.id] = first[0].shard if node.op == "input" and first else node.shard
    return homes


def place_sources(
    graph: Graph,
    trace: Trace,
    replicas: int,
    ipus_per_replica: int,
    input_shard: int | None = None,
) -> list[dict[int, Tensor]]:
    """Each replica's tensors for the trace's inputs and weights, mapped over one IPU
    (inputs on ``input_shard`` when given: a pipeline's first stage)."""
    homes = home_shards(trace)
    readers = weight_readers(trace)
    if input_shard is not None:
        homes |= {node.id: input_shard for node in trace.inputs}
    envs: list[dict[int, Tensor]] = []
    for r in range(replicas):
        env: dict[int, Tensor] = {}
        for node in (*trace.inputs, *trace.params.values()):
            name = node.name if replicas == 1 else f"replica{r}/{node.name}"
            ipu = r * ipus_per_replica + homes[node.id]
            with source_location(node.location):  # where the input or weight was made
                made = create_weight(graph, node, readers, ipu, name)
                tensor = made or graph.add_variable(node.type, node.shape, name)
            if made is None:
                graph.set_tile_mapping_array(
                    tensor, linear_tile_array(tensor.num_elements, ipu_tiles(graph, ipu, "shard"))
                )
            env[node.id] = tensor
        envs.append(env)
    return envs


def param_handles(graph: Graph, params: Mapping[str, Node], envs: list[dict[int, Tensor]]) -> dict:
    """Host read/write handles ``<weight>/replica<r>`` for every replica's weights."""
    tensors = {}
    for name, node in params.items():
        tensors[name] = [env[node.id] for env in envs]
        for r, t in enumerate(tensors[name]):
            graph.create_host_write(f"{name}/replica{r}", t)
            graph.create_host_read(f"{name}/replica{r}", t)
    return tensors


class DeviceSession:
    """The Engine of one built program, loaded on its device, run once per call."""

    def __init__(
        self,
        graph: Graph,
        built: BuiltProgram,
        device: Device,
        engine_options: Mapping[str, object] | None,
        framework: Mapping[str, str] | None = None,
        graph_record: GraphRecord | None = None,
    ) -> None:
        self.graph = graph
        self.built = built
        self.device = device
        replicas = int((framework or {}).get("Replicas", 1))
        self.engine = Engine(
            graph,
            built.program,
            options=engine_options,
            framework=framework,
            replication_factor=replicas,
            graph_record=graph_record,
        )
        self.engine.load(device)

    @property
    def replicas(self) -> int:
        return len(next(iter(self.built.params.values()), [None]))

    def write_params(self, values: Mapping[str, np.ndarray]) -> None:
        """The same weights on every replica (copyWeightsToDevice)."""
        for name, tensors in self.built.params.items():
            for r in range(len(tensors)):
                self.engine.write_tensor(f"{name}/replica{r}", values[name])

    def read_params(self, replica: int = 0) -> dict[str, np.ndarray]:
        return {
            name: self.engine.read_tensor(f"{name}/replica{replica}") for name in self.built.params
        }

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Feed ``inputs`` (one host array per infeed), run, and return each outfeed's values."""
        for feed, array in zip(self.built.infeeds, inputs, strict=True):
            self.engine.connect_stream(feed.name, host_input(array, feed))
        outputs = []
        for feed in self.built.outfeeds:
            count = self.built.copies_per_run * feed.replicas * math.prod(feed.shape)
            out = np.empty(count, dtype=feed.type.numpy_dtype)
            self.engine.connect_stream(feed.name, out)
            outputs.append(out)
        self.engine.run(0)
        return outputs
