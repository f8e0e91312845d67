"""Random engine programs: variables of random shapes and types, random tile mappings,
compute sets of the engine's codelets (popops) and of a user codelet, Sequence / Repeat /
Call / Copy / stream nesting; each compiled, run and checked against a numpy model of the
same program, with random bad calls mixed in. Only EngineErrors may escape a bad call, each
case stays within a time and memory bound, and the engine works after every error (the
final run still equals the model). ``make fuzz`` runs thousands of cases and prints figures.
"""

from __future__ import annotations

import collections
import itertools
import math
import resource
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ipu_engine import (
    FLOAT,
    INT,
    Call,
    Copy,
    Engine,
    EngineError,
    Execute,
    Graph,
    InOut,
    IPUModel,
    Repeat,
    Sequence,
    Vertex,
    popops,
)
from tests.fuzzing import DERANDOMIZE, examples

SECONDS_PER_CASE = 20.0
MEMORY_GROWTH_BYTES = 300 * 2**20
MAX_DEPTH = 3
DEVICE = IPUModel("ipu2", tiles_per_ipu=4).create_device()
NUM_TILES = DEVICE.target.num_tiles
TYPES = (FLOAT, INT)
BINARY = {"add": (popops.add_in_place, np.add), "sub": (popops.sub_in_place, np.subtract),
          "mul": (popops.mul_in_place, np.multiply)}  # fmt: skip

FIGURES: collections.Counter = collections.Counter()


class NegateFloat(Vertex):
    x = InOut(FLOAT)

    def compute(self):
        self.x[:] = -self.x


class NegateInt(Vertex):
    x = InOut(INT)

    def compute(self):
        self.x[:] = -self.x


NEGATE = {FLOAT: NegateFloat, INT: NegateInt}


# -- bad arguments: anything at all, often nearly right ------------------------------------

anything = st.deferred(
    lambda: st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=8),
        st.complex_numbers(), st.binary(max_size=4),
        st.lists(anything, max_size=3), st.dictionaries(st.text(max_size=3), anything, max_size=2),
    )
)  # fmt: skip
bad_shapes = st.one_of(
    anything, st.lists(st.one_of(st.integers(-3, 6), st.floats(-3, 6), st.booleans()), max_size=3),
    st.sampled_from([[10**12], [2**40, 2**40], [2.5], [-1], [True]]),
)  # fmt: skip
bad_tiles = st.one_of(
    anything, st.integers(-3, NUM_TILES + 2), st.floats(-1, NUM_TILES),
    st.lists(st.lists(st.tuples(st.integers(-2, 8), st.one_of(st.integers(-2, 8), st.floats(0, 8))),
                      max_size=2), max_size=NUM_TILES + 1),
)  # fmt: skip
bad_counts = st.one_of(anything, st.integers(-3, 2**33), st.floats(-1, 5))
bad_data = st.one_of(
    anything,
    st.lists(st.one_of(st.integers(-(2**40), 2**40), st.floats(), st.complex_numbers()),
             max_size=8),
    st.lists(st.lists(st.integers(-4, 4), max_size=3), max_size=3),
    st.lists(st.floats(-4, 4), min_size=1, max_size=8),
)  # fmt: skip
bad_options = st.one_of(
    anything,
    st.dictionaries(st.sampled_from(["debug.instrument", "debug.allowOutOfMemory", "nope", ""]),
                    anything, min_size=1, max_size=2),
    st.builds(lambda depth: {"autoReport.all": _nested(depth)}, st.integers(1, 10**5)),
    st.builds(lambda t: {"autoReport.all": "true", "autoReport.directory": f"/tmp/x\0{t}"},
              st.text(max_size=3)),
)  # fmt: skip


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Case:
    """One random program being built: the graph, its variables, a numpy model of what the
    program does (a tree of ops, run by ``apply``), and the streams' host buffers."""

    def __init__(self, draw) -> None:
        self.draw = draw
        self.graph = Graph(DEVICE.target)
        self.vars: list = []
        self.values: list[np.ndarray] = []
        self.streams: dict[str, tuple[int, np.ndarray]] = {}  # name -> (var, host buffer)
        self.names = 0
        for i in range(draw(st.integers(1, 4))):
            elem_type = draw(st.sampled_from(TYPES))
            shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=2))
            v = self.graph.add_variable(elem_type, shape, f"v{i}")
            self.map_randomly(v)
            self.graph.create_host_write(f"v{i}", v)
            self.graph.create_host_read(f"v{i}", v)
            n = math.prod(shape)
            data = draw(st.lists(st.integers(-8, 8), min_size=n, max_size=n))
            self.vars.append(v)
            self.values.append(np.array(data, elem_type.numpy_dtype).reshape(shape))

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def map_randomly(self, v) -> None:
        how = self.draw(st.sampled_from(["one", "intervals"]))
        n = v.num_elements
        if how == "one":
            self.graph.set_tile_mapping(v, self.draw(st.integers(0, NUM_TILES - 1)))
            return
        cuts = sorted(self.draw(st.lists(st.integers(0, n), max_size=3)))
        bounds = [0, *cuts, n]
        mapping: list[list[tuple[int, int]]] = [[] for _ in range(NUM_TILES)]
        for begin, end in itertools.pairwise(bounds):
            mapping[self.draw(st.integers(0, NUM_TILES - 1))].append((begin, end))
        self.graph.set_tile_mapping(v, mapping)

    # -- random bad calls --------------------------------------------------------------------
    def attempt(self, what: str, call) -> tuple[bool, object]:
        """Run a call that may be bad: (False, None) after an EngineError, which is
        counted; (True, its result) when it was legal after all; anything else escapes."""
        FIGURES["bad calls"] += 1
        try:
            result = call()
        except EngineError as error:
            FIGURES[f"error {type(error).__name__}"] += 1
            assert str(error), what
            return False, None
        except Exception:  # not BaseException: hypothesis stops a case with its own
            FIGURES["escapes"] += 1
            raise
        FIGURES["bad calls that were fine"] += 1
        return True, result

    def bad_graph_call(self) -> None:
        draw, graph = self.draw, self.graph
        kind = draw(st.sampled_from(
            ["shape", "tile", "intervals", "repeat", "sequence", "cycle", "copy", "stream",
             "constant", "options", "handle"]
        ))  # fmt: skip
        v = draw(st.sampled_from(self.vars))
        if kind == "shape":
            shape = draw(bad_shapes)
            try:  # a legal shape may be too large for the tiles: find out on the side
                fits = Graph(DEVICE.target).add_variable(FLOAT, shape).num_elements <= 256
            except EngineError:
                fits = True
            if fits:  # the same call on the program's graph
                ok, t = self.attempt(kind, lambda: graph.add_variable(FLOAT, shape, "b"))
                if ok:  # a valid shape after all: map it so the graph compiles
                    graph.set_tile_mapping(t, 0)
        elif kind in ("tile", "intervals"):
            self.attempt(kind, lambda: graph.set_tile_mapping(v, draw(bad_tiles)))
            self.map_randomly(v)  # whatever happened, a full mapping again
        elif kind == "repeat":
            self.attempt(kind, lambda: Repeat(draw(bad_counts), Sequence()))
        elif kind == "sequence":
            self.attempt(kind, lambda: Sequence(draw(anything)))
        elif kind == "cycle":
            a, b = Sequence(), Sequence()
            a.add(b)
            self.attempt(kind, lambda: b.add(draw(st.sampled_from([a, b]))))
        elif kind == "copy":
            self.attempt(kind, lambda: Copy(v, draw(anything)))
        elif kind == "stream":
            self.attempt(kind, lambda: graph.add_host_to_device_fifo(
                self.fresh("unused"), FLOAT, draw(bad_counts)))  # fmt: skip
        elif kind == "constant":
            ok, t = self.attempt(kind, lambda: graph.add_constant(
                draw(st.sampled_from(TYPES)), draw(st.integers(1, 3)), draw(bad_data)))  # fmt: skip
            if ok:
                graph.set_tile_mapping(t, 0)
        elif kind == "options":
            self.attempt(kind, lambda: Engine(graph, Sequence(), options=draw(bad_options)))
        else:
            self.attempt(kind, lambda: graph.create_host_write(draw(anything), v))

    def bad_engine_call(self, engine: Engine, model: Model) -> None:
        draw = self.draw
        kind = draw(st.sampled_from(["write", "read", "run", "stream", "handle"]))
        i = draw(st.integers(0, len(self.vars) - 1))
        v = self.vars[i]
        if kind == "write":
            data = draw(bad_data)
            ok, _ = self.attempt(kind, lambda: engine.write_tensor(f"v{i}", data))
            if ok:  # the write was legal: the model follows
                model.values[i] = np.asarray(data).astype(v.type.numpy_dtype).reshape(v.shape)
        elif kind == "read":
            out = draw(st.one_of(
                anything,
                st.builds(_read_only, st.integers(0, 8), st.sampled_from([np.float32, np.int32])),
                st.builds(np.zeros, st.integers(0, 8), st.sampled_from([np.float64, np.int16])),
            ))  # fmt: skip
            ok, got = self.attempt(kind, lambda: engine.read_tensor(f"v{i}", out=out))
            if ok:
                np.testing.assert_array_equal(got, model.values[i])
                if out is not None:
                    np.testing.assert_array_equal(out.reshape(v.shape), model.values[i])
        elif kind == "run":
            index = draw(st.one_of(anything.filter(lambda x: x != 0), st.integers(1, 3)))
            self.attempt(kind, lambda: engine.run(index))
        elif kind == "stream":
            if self.streams:
                name = draw(st.sampled_from(sorted(self.streams)))
                self.attempt(kind, lambda: engine.connect_stream(name, draw(bad_data)))
                _, buffer = self.streams[name]
                engine.connect_stream(name, buffer)  # the good buffer again, from the start
                model.position[name] = 0
        else:
            self.attempt(kind, lambda: engine.read_tensor(draw(anything)))

    # -- random programs -----------------------------------------------------------------------
    def block(self, depth: int) -> tuple[Sequence, list]:
        """A random Sequence and its model: a list of ops, each a tuple."""
        prog, ops = Sequence(), []
        kinds = ["binary", "copy", "negate", "stream_in", "stream_out", "bad"]
        if depth < MAX_DEPTH:
            kinds += ["repeat", "sequence", "call"]
        for _ in range(self.draw(st.integers(0, 4))):
            kind = self.draw(st.sampled_from(kinds))
            i = self.draw(st.integers(0, len(self.vars) - 1))
            v = self.vars[i]
            if kind == "binary":
                alike = [j for j, w in enumerate(self.vars)
                         if j != i and w.type == v.type and w.shape == v.shape]  # fmt: skip
                if alike:
                    j, op = (
                        self.draw(st.sampled_from(alike)),
                        self.draw(st.sampled_from(sorted(BINARY))),
                    )
                    BINARY[op][0](self.graph, v, self.vars[j], prog, self.fresh(op))
                    ops.append((op, i, j))
            elif kind == "copy":
                alike = [j for j, w in enumerate(self.vars)
                         if j != i and w.type == v.type and w.num_elements == v.num_elements]  # fmt: skip
                if alike:
                    j = self.draw(st.sampled_from(alike))
                    prog.add(Copy(v, self.vars[j]))
                    ops.append(("copy", i, j))
            elif kind == "negate":
                cs = self.graph.add_compute_set(self.fresh("negate"))
                vertex = self.graph.add_vertex(cs, NEGATE[v.type], {"x": v.flatten()})
                self.graph.set_tile_mapping(vertex, self.draw(st.integers(0, NUM_TILES - 1)))
                prog.add(Execute(cs))
                ops.append(("negate", i))
            elif kind == "stream_in":
                name = self.fresh("in")
                stream = self.graph.add_host_to_device_fifo(name, v.type, v.num_elements)
                chunks = self.draw(st.integers(1, 3))
                count = chunks * v.num_elements
                data = self.draw(st.lists(st.integers(-8, 8), min_size=count, max_size=count))
                self.streams[name] = (i, np.array(data, v.type.numpy_dtype))
                prog.add(Copy(stream, v))
                ops.append(("in", i, name))
            elif kind == "stream_out":
                name = self.fresh("out")
                stream = self.graph.add_device_to_host_fifo(name, v.type, v.num_elements)
                chunks = self.draw(st.integers(1, 3))
                self.streams[name] = (i, np.zeros(chunks * v.num_elements, v.type.numpy_dtype))
                prog.add(Copy(v, stream))
                ops.append(("out", i, name))
            elif kind == "bad":
                self.bad_graph_call()
            elif kind == "repeat":
                count = self.draw(st.integers(0, 3))
                body, inner = self.block(depth + 1)
                prog.add(Repeat(count, body))
                ops.append(("repeat", count, inner))
            elif kind == "sequence":
                body, inner = self.block(depth + 1)
                prog.add(body)
                ops.extend(inner)
            else:
                body, inner = self.block(depth + 1)
                function = self.graph.add_function(body, self.fresh("f"))
                calls = self.draw(st.integers(1, 2))
                for _ in range(calls):
                    prog.add(Call(function))
                    ops.extend(inner)
        return prog, ops


def _read_only(n: int, dtype) -> np.ndarray:
    out = np.zeros(n, dtype)
    out.flags.writeable = False
    return out


class Model:
    """The numpy meaning of a program: values of every variable and stream positions."""

    def __init__(self, case: Case) -> None:
        self.values = [v.copy() for v in case.values]
        self.buffers = {name: buf.copy() for name, (_, buf) in case.streams.items()}
        self.buffers_out = {n: b for n, b in self.buffers.items() if n.startswith("out")}
        self.position = dict.fromkeys(self.buffers, 0)

    def apply(self, ops: list) -> None:
        for op in ops:
            kind = op[0]
            if kind in BINARY:
                _, i, j = op
                self.values[i] = BINARY[kind][1](self.values[i], self.values[j])
            elif kind == "copy":
                _, i, j = op
                self.values[j] = self.values[i].reshape(self.values[j].shape).copy()
            elif kind == "negate":
                self.values[op[1]] = -self.values[op[1]]
            elif kind in ("in", "out"):
                _, i, name = op
                value, buf = self.values[i], self.buffers[name]
                at = self.position[name]
                if kind == "in":
                    self.values[i] = buf[at : at + value.size].reshape(value.shape).copy()
                else:
                    buf[at : at + value.size] = value.reshape(-1)
                self.position[name] = (at + value.size) % buf.size
            else:
                _, count, inner = op
                for _ in range(count):
                    self.apply(inner)


@pytest.fixture(scope="module", autouse=True)
def figures(request):
    """Print the suite's figures after its cases (``make fuzz`` shows them)."""
    FIGURES.clear()
    started = time.perf_counter()
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None and FIGURES["cases"]:
        errors = ", ".join(f"{k[6:]} {v}" for k, v in sorted(FIGURES.items())
                           if k.startswith("error "))  # fmt: skip
        with capture.global_and_fixture_disabled():
            reporter.write_line(
                f"\nengine fuzz: {FIGURES['cases']} cases, {FIGURES['programs']} random "
                f"programs compiled and run ({FIGURES['runs']} runs checked against numpy), {FIGURES['bad calls']} bad calls "
                f"({FIGURES['bad calls that were fine']} turned out legal; errors: {errors}), "
                f"escapes {FIGURES['escapes']}, {time.perf_counter() - started:.1f} s"
            )


@settings(
    max_examples=examples(25),
    derandomize=DERANDOMIZE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_random_programs_equal_numpy_and_only_engine_errors_escape_bad_calls(data):
    FIGURES["cases"] += 1
    before, started = peak_rss(), time.perf_counter()
    case = Case(data.draw)
    program, ops = case.block(0)
    engine = Engine(case.graph, program)
    engine.load(DEVICE)
    for i, values in enumerate(case.values):
        engine.write_tensor(f"v{i}", values)
    for name, (_, buffer) in case.streams.items():
        engine.connect_stream(name, buffer)
    model = Model(case)
    for _ in range(data.draw(st.integers(0, 3))):
        case.bad_engine_call(engine, model)
    FIGURES["programs"] += 1
    for run in range(data.draw(st.integers(1, 2))):
        engine.run(0)
        model.apply(ops)
        FIGURES["runs"] += 1
        with np.errstate(all="ignore"):
            for i, expected in enumerate(model.values):
                np.testing.assert_array_equal(engine.read_tensor(f"v{i}"), expected)
            for name, expected in model.buffers_out.items():
                np.testing.assert_array_equal(case.streams[name][1], expected)
        if run == 0:
            for _ in range(data.draw(st.integers(0, 2))):
                case.bad_engine_call(engine, model)
    assert time.perf_counter() - started < SECONDS_PER_CASE
    assert peak_rss() - before < MEMORY_GROWTH_BYTES
