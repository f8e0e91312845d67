"""Control programs: sequences, loops, conditions, functions, prints and streams."""

import io

import numpy as np

from ipu_engine import (
    BOOL,
    FLOAT,
    INT,
    Call,
    Copy,
    Engine,
    Execute,
    Graph,
    If,
    InOut,
    Input,
    Output,
    PrintTensor,
    Repeat,
    RepeatWhileFalse,
    RepeatWhileTrue,
    Sequence,
    Vertex,
    popops,
)


class Increment(Vertex):
    counter = InOut(INT, scalar=True)

    def compute(self):
        self.counter = self.counter + 1


class LessThan(Vertex):
    value = Input(INT, scalar=True)
    limit = Input(INT, scalar=True)
    result = Output(BOOL, scalar=True)

    def compute(self):
        self.result = self.value < self.limit


class Not(Vertex):
    x = Input(BOOL, scalar=True)
    y = Output(BOOL, scalar=True)

    def compute(self):
        self.y = not self.x


def _counter_graph(device):
    graph = Graph(device.target)
    counter = graph.add_variable(INT, [], "counter")
    graph.set_tile_mapping(counter, 0)
    graph.create_host_write("counter", counter)
    graph.create_host_read("counter", counter)
    inc = graph.add_compute_set("inc")
    v = graph.add_vertex(inc, Increment, counter=counter)
    graph.set_tile_mapping(v, 0)
    return graph, counter, inc


def _run(graph, device, prog, counter=0):
    engine = Engine(graph, prog)
    engine.load(device)
    engine.write_tensor("counter", np.array(counter))
    engine.run(0)
    return int(engine.read_tensor("counter"))


def test_repeat_runs_its_body_n_times(device4):
    graph, _, inc = _counter_graph(device4)
    assert _run(graph, device4, Repeat(7, Execute(inc))) == 7
    assert _run(graph, device4, Repeat(0, Execute(inc))) == 0


def test_repeat_while_true_checks_the_condition_before_each_pass(device4):
    graph, counter, inc = _counter_graph(device4)
    limit = graph.add_constant(INT, [], 5, "limit")
    pred = graph.add_variable(BOOL, [], "pred")
    for t in (limit, pred):
        graph.set_tile_mapping(t, 0)
    check = graph.add_compute_set("check")
    v = graph.add_vertex(check, LessThan, value=counter, limit=limit, result=pred)
    graph.set_tile_mapping(v, 0)
    prog = RepeatWhileTrue(Execute(check), pred, Execute(inc))
    assert _run(graph, device4, prog, counter=0) == 5
    assert _run(graph, device4, prog, counter=9) == 9  # condition false at once
    # RepeatWhileFalse loops while the predicate is false: here never, as 2 < 5 at once
    until = RepeatWhileFalse(Execute(check), pred, Execute(inc))
    assert _run(graph, device4, until, counter=2) == 2


def test_repeat_while_false_loops_until_the_predicate_turns_true(device4):
    graph, counter, inc = _counter_graph(device4)
    limit = graph.add_constant(INT, [], 3, "limit")
    below = graph.add_variable(BOOL, [], "below")
    done = graph.add_variable(BOOL, [], "done")
    for t in (limit, below, done):
        graph.set_tile_mapping(t, 0)
    check = graph.add_compute_set("check")
    v = graph.add_vertex(check, LessThan, value=counter, limit=limit, result=below)
    graph.set_tile_mapping(v, 0)
    cond = Sequence(Execute(check))
    popops_not = graph.add_compute_set("not")
    graph.set_tile_mapping(graph.add_vertex(popops_not, Not, x=below, y=done), 0)
    cond.add(Execute(popops_not))
    assert _run(graph, device4, RepeatWhileFalse(cond, done, Execute(inc)), counter=0) == 3


def test_if_takes_the_branch_its_predicate_chooses(device4):
    graph, _, inc = _counter_graph(device4)
    flag = graph.add_variable(BOOL, [], "flag")
    graph.set_tile_mapping(flag, 0)
    graph.create_host_write("flag", flag)
    prog = If(flag, Repeat(3, Execute(inc)), Execute(inc))
    for value, expected in ((True, 3), (False, 1)):
        engine = Engine(graph, prog)
        engine.load(device4)
        engine.write_tensor("flag", np.array(value))
        engine.run(0)
        assert int(engine.read_tensor("counter")) == expected


def test_call_runs_one_function_from_several_places(device4):
    graph, _, inc = _counter_graph(device4)
    twice = graph.add_function(Sequence(Execute(inc), Execute(inc)), "twice")
    engine = Engine(graph, [Sequence(Call(twice), Call(twice)), Call(twice)])
    engine.load(device4)
    engine.write_tensor("counter", np.array(0))
    engine.run(0)
    assert int(engine.read_tensor("counter")) == 4
    engine.run(1)
    assert int(engine.read_tensor("counter")) == 6
    # the function's program steps exist once, however many Calls name it
    executes = [s for s in engine.executable.steps if s.kind.poplar_name == "OnTileExecute"]
    assert len(executes) == 2


def test_print_tensor_formats_like_poplar(device4):
    graph = Graph(device4.target)
    ints = graph.add_constant(INT, [2, 3], [[1, -2, 3], [4, 5, 6]], "ints")
    floats = graph.add_constant(FLOAT, [4], [0.5, 1e-7, 100, 2.0 / 3.0], "floats")
    long = graph.add_constant(INT, [40], np.arange(40), "long")
    flags = graph.add_constant(BOOL, [2], [True, False], "flags")
    for t in (ints, floats, long, flags):
        graph.set_tile_mapping(t, 0)
    prog = Sequence(
        PrintTensor("ints", ints),
        PrintTensor("floats", floats),
        PrintTensor(long),
        PrintTensor("flags", flags),
    )
    engine = Engine(graph, prog)
    engine.load(device4)
    out = io.StringIO()
    engine.set_print_stream(out)
    engine.run()
    assert out.getvalue().splitlines() == [
        "ints: {{1,-2,3},{4,5,6}}",
        "floats: {0.5,1e-07,100,0.666667}",
        "long: {0,1,2,...,37,38,39}",
        "flags: {1,0}",
    ]


def test_fifo_wraps_round_its_circular_buffer_and_device_to_host_fills_in_order(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(FLOAT, [3], "x")
    graph.set_tile_mapping(x, 1)
    inp = graph.add_host_to_device_fifo("in", FLOAT, 3)
    outp = graph.add_device_to_host_fifo("out", FLOAT, 3)
    prog = Sequence()
    doubled = popops.add(graph, x, x, prog, "double")
    body = Sequence(Copy(inp, x))
    body.add(Execute(graph.compute_sets[-1]))
    body.add(Copy(doubled, outp))
    engine = Engine(graph, Repeat(4, body))
    engine.load(device4)
    source = np.array([1, 2, 3, 4, 5, 6], dtype=np.float32)  # two chunks, used twice
    results = np.zeros(12, dtype=np.float32)
    engine.connect_stream("in", source)
    engine.connect_stream("out", results)
    engine.run()
    assert results.tolist() == [2, 4, 6, 8, 10, 12, 2, 4, 6, 8, 10, 12]


def test_stream_callbacks_produce_and_consume_data(device4):
    graph = Graph(device4.target)
    x = graph.add_variable(INT, [2], "x")
    graph.set_tile_mapping(x, 0)
    inp = graph.add_host_to_device_fifo("in", INT, 2)
    outp = graph.add_device_to_host_fifo("out", INT, 2)
    engine = Engine(graph, Repeat(3, Sequence(Copy(inp, x), Copy(x, outp))))
    engine.load(device4)
    produced = iter(range(100))
    received = []
    engine.connect_stream(
        "in", lambda buf: buf.__setitem__(slice(None), [next(produced), next(produced)])
    )
    engine.connect_stream("out", lambda data: received.append(data.tolist()))
    engine.run()
    assert received == [[0, 1], [2, 3], [4, 5]]


def test_programs_are_logged_as_program_steps_in_order(device4):
    graph, _, inc = _counter_graph(device4)
    engine = Engine(graph, Sequence(Execute(inc), Repeat(2, Execute(inc))))
    engine.load(device4)
    engine.write_tensor("counter", np.array(0))
    engine.run()
    kinds = [engine.executable.steps[i].kind.poplar_name for i in engine.last_run_steps]
    assert kinds == ["OnTileExecute", "Repeat", "OnTileExecute", "OnTileExecute"]
