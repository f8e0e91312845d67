"""The compile model, checked against layouts, exchanges and cycles worked out by hand."""

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    Engine,
    Execute,
    Graph,
    Input,
    IPUModel,
    OutOfMemoryError,
    Output,
    Repeat,
    Sequence,
    Vertex,
    popops,
    poputil,
)
from ipu_engine.poplar.cost_model import constants as C
from profiler_core.model.kinds import MemoryCategory as M
from profiler_core.model.kinds import StepKind


class Double(Vertex):
    in_ = Input(FLOAT)
    out = Output(FLOAT)

    def compute(self):
        self.out[:] = 2 * self.in_


@pytest.fixture
def four_tile_engine():
    """x[8] two elements per tile; y[8] all on tile 0; vertex v on tile v doubles x[2v:2v+2]
    into y[2v:2v+2], so tiles 1..3 send their results to tile 0 after the compute."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [8], "x")
    y = graph.add_variable(FLOAT, [8], "y")
    for t in range(4):
        graph.set_tile_mapping(x[2 * t : 2 * t + 2], t)
    graph.set_tile_mapping(y, 0)
    graph.create_host_write("x", x)
    graph.create_host_read("y", y)
    cs = graph.add_compute_set("double")
    vertices = []
    for t in range(4):
        v = graph.add_vertex(cs, Double, {"in": x[2 * t : 2 * t + 2], "out": y[2 * t : 2 * t + 2]})
        graph.set_tile_mapping(v, t)
        vertices.append(v)
    graph.set_perf_estimate(vertices[0], 100)
    engine = Engine(graph, Execute(cs))
    engine.load(device)
    engine.write_tensor("x", np.arange(8))
    engine.run()
    assert engine.read_tensor("y").tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    return engine


def test_hand_counted_variable_bytes_vertices_and_state(four_tile_engine):
    mem = four_tile_engine.model.memory.by_category
    # x: 2 floats on each tile; y: 8 floats on tile 0; both always live (host handles)
    assert mem[M.ALWAYS_LIVE_VARIABLES].tolist() == [8 + 32, 8, 8, 8]
    assert mem[M.NOT_ALWAYS_LIVE_VARIABLES].tolist() == [0, 0, 0, 0]
    assert mem[M.ALIGNMENT_GAPS].tolist() == [0, 0, 0, 0]  # every region a multiple of 8
    counts = four_tile_engine.model.vertex_counts
    assert counts.tile.tolist() == [0, 1, 2, 3] and counts.count.tolist() == [1, 1, 1, 1]
    # two vector edges (pointer + count each): 16 bytes of state per vertex
    assert mem[M.VERTEX_STATE].tolist() == [16] * 4
    # a vertex-list entry per vertex plus the compute set's list header per tile
    assert mem[M.VERTEX_DESCRIPTORS].tolist() == [4 + 8] * 4
    assert mem[M.VERTEX_CODE].tolist() == [Double.code_bytes] * 4
    stack = C.SUPERVISOR_STACK_BYTES + C.WORKER_CONTEXTS * Double.stack_bytes
    assert mem[M.STACK].tolist() == [stack] * 4
    # tiles 1..3 hold their two results in a buffer until the exchange sends them to tile 0
    assert mem[M.EXCHANGE_BUFFERS].tolist() == [0, 8, 8, 8]
    assert four_tile_engine.model.memory.total.tolist() == mem.sum(axis=0).tolist()


def test_hand_counted_exchange_after_the_compute_set(four_tile_engine):
    steps = four_tile_engine.executable.steps
    kinds = [s.kind for s in steps]
    assert kinds == [StepKind.ON_TILE_EXECUTE, StepKind.SYNC, StepKind.DO_EXCHANGE]
    traffic = steps[2].facts["traffic"]
    assert traffic.tiles.tolist() == [0, 1, 2, 3]
    assert traffic.bytes_in.tolist() == [24, 0, 0, 0]  # 3 tiles x 2 floats
    assert traffic.bytes_out.tolist() == [0, 8, 8, 8]
    cycles = four_tile_engine.model.step_cycles[:, 0]
    assert cycles[2] == 24 // C.EXCHANGE_BYTES_PER_CYCLE + C.EXCHANGE_LATENCY_CYCLES
    # the IPU Model's default relativeSyncDelay AUTO adds its delay to the sync
    assert cycles[1] == C.SYNC_CYCLES + C.RELATIVE_SYNC_DELAY_CYCLES


def test_compute_cycles_use_six_workers_and_user_estimates_win(four_tile_engine):
    per_tile = four_tile_engine.model.cs_cycles[0]
    # default estimate: entry cost + 2 input + 2 output elements, on one worker of six
    default = C.VERTEX_OVERHEAD_CYCLES + 4
    assert per_tile.tiles.tolist() == [0, 1, 2, 3]
    assert per_tile.cycles.tolist() == [100 * 6, default * 6, default * 6, default * 6]
    assert four_tile_engine.model.step_cycles[0, 0] == 600  # the slowest tile


def test_not_always_live_temporaries_share_memory():
    """a -> t1 -> t2 -> t3 -> out on one tile: only two temporaries are live at once."""
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [4], "a")
    graph.set_tile_mapping(a, 0)
    graph.create_host_write("a", a)
    prog = Sequence()
    t1 = popops.add(graph, a, a, prog, "t1")
    t2 = popops.mul(graph, t1, t1, prog, "t2")
    t3 = popops.neg(graph, t2, prog, "t3")
    out = popops.sub(graph, t3, a, prog, "out")
    graph.create_host_read("out", out)
    model = Engine(graph, prog).model
    names = [v.name for v in graph.variables]
    first = dict(zip(names, model.liveness.first.tolist(), strict=True))
    last = dict(zip(names, model.liveness.last.tolist(), strict=True))
    assert [(first[n], last[n]) for n in ("t1", "t2", "t3")] == [(0, 1), (1, 2), (2, 3)]
    assert model.liveness.always_live.tolist() == [True, False, False, False, True]
    assert model.live_bytes.tolist() == [16, 32, 32, 16]  # 4 floats per temporary
    nal = model.memory.by_category[M.NOT_ALWAYS_LIVE_VARIABLES]
    assert nal.tolist() == [32, 0, 0, 0]  # not 48: t1 and t3 share their space


def test_loops_keep_values_live_across_iterations():
    device = IPUModel("ipu2", tiles_per_ipu=2).create_device()
    graph = Graph(device.target)
    acc = graph.add_variable(FLOAT, [2], "acc")
    graph.set_tile_mapping(acc, 0)
    graph.create_host_read("acc", acc)
    body = Sequence()
    tmp = popops.exp(graph, acc, body, "tmp")  # written and read inside each iteration
    popops.add_in_place(graph, acc, tmp, body)
    prog = Sequence()
    popops.zero(graph, acc, prog)
    prog.add(Repeat(3, body))
    engine = Engine(graph, prog)
    model = engine.model
    tmp_id = [v.name for v in graph.variables].index("tmp")
    repeat = next(s.id for s in engine.executable.steps if s.kind is StepKind.REPEAT)
    assert not model.liveness.always_live[tmp_id]
    assert model.liveness.first[tmp_id] > repeat  # only within an iteration


def test_out_of_memory_names_the_tile_with_poplars_message():
    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    m1 = graph.add_variable(FLOAT, [20000, 12000], "m1")  # 960 MB > 1472 x 638,976 bytes
    poputil.map_tensor_linearly(graph, m1)
    graph.create_host_write("m1", m1)
    with pytest.raises(OutOfMemoryError) as info:
        Engine(graph, Sequence())
    per_tile = -(-20000 * 12000 // 1472) * 4  # elements on tile 0, as floats
    message = str(info.value)
    assert message.startswith("Out of memory on tile 0: ")
    used = int(message.split(": ")[1].split(" bytes")[0])
    assert used > per_tile > 638_976
    assert "bytes used but tiles only have 638976 bytes of memory (1472 tiles are over" in message
    assert message.endswith('"debug.allowOutOfMemory": "true" to get a report of the layout.')
    allowed = Engine(graph, Sequence(), options={"debug.allowOutOfMemory": "true"})
    over = allowed.model.tiles_over
    assert over.size == 1472
    assert (allowed.model.memory.total[over] - 638_976).min() > 0
    allowed.load(device)
    with pytest.raises(OutOfMemoryError, match="does not fit in tile memory"):
        allowed.run()


def test_a_variable_shared_by_two_engine_programs_is_always_live():
    device = IPUModel("ipu2", tiles_per_ipu=2).create_device()
    graph = Graph(device.target)
    a = graph.add_variable(FLOAT, [4], "a")
    graph.set_tile_mapping(a, 0)
    graph.create_host_write("a", a)
    first, second = Sequence(name="first"), Sequence(name="second")
    shared = popops.exp(graph, a, first, "shared")  # written by program 0 ...
    out = popops.neg(graph, shared, second, "out")  # ... read by program 1
    graph.create_host_read("out", out)
    local = popops.sqrt(graph, a, first, "local")  # only in program 0
    popops.add_in_place(graph, a, local, first)
    engine = Engine(graph, [first, second])
    names = [v.name for v in graph.variables]
    live = dict(zip(names, engine.model.liveness.always_live.tolist(), strict=True))
    assert live["shared"] and not live["local"]
    nodes = engine.executable.lowering.nodes
    roots = engine.executable.lowering.root_nodes
    assert [nodes[r].first_step for r in roots] == [
        0,
        next(s.id for s in engine.executable.steps if s.name.startswith("out")),
    ]
