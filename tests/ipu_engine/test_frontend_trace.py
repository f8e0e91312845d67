"""Traced functions compiled with ``ipu_engine.compile`` / ``@function`` compute what numpy
computes, through the library ops, with name scopes and source lines kept for reports."""

import numpy as np

import ipu_engine as ie
from ipu_engine import ops

RNG = np.random.default_rng(5)
SMALL = {"tiles_per_ipu": 16}  # a few tiles per IPU keeps graphs small and quick


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_basic_graph_of_three_inputs_adds_as_in_the_tutorial():
    a = np.array([1, 1], dtype=np.float32)
    b = np.array([0, 1], dtype=np.float32)
    c = np.array([1, 5], dtype=np.float32)
    out = ie.compile(lambda a, b, c: (a + b) + (a + c), [a, b, c])
    assert out.tolist() == [3.0, 8.0]


def test_operators_broadcast_and_reduce_like_numpy():
    x, w, b, v = rand(6, 4), rand(4, 3), rand(3), rand(4)

    def fn(x, w, b, v):
        h = ops.relu(x @ w + b)
        y = (2.0 - h) * h / 3.0 - -x.sum(axis=1, keepdims=True)
        z = ops.tanh(x[1:4, ::2]).T @ ops.sigmoid(x[1:4])
        return y, ops.softmax(y), y.mean(), z.max(axis=0), np.exp(x @ v) + ops.log(abs(v) + 1).sum()

    got = ie.compile(fn, [x, w, b, v], **SMALL)
    h = np.maximum(x @ w + b, 0)
    y = (2.0 - h) * h / 3.0 + x.sum(axis=1, keepdims=True)
    e = np.exp(y - y.max(axis=1, keepdims=True))
    sigmoid = 1 / (1 + np.exp(-x[1:4]))
    z = np.tanh(x[1:4, ::2]).T @ sigmoid
    expected = (
        y,
        e / e.sum(axis=1, keepdims=True),
        y.mean(),
        z.max(axis=0),
        np.exp(x @ v) + np.log(np.abs(v) + 1).sum(),
    )
    assert len(got) == len(expected)
    for g, want in zip(got, expected, strict=True):
        assert g.shape == np.shape(want)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)


def test_reshape_transpose_and_integer_tensors():
    x = np.arange(24, dtype=np.int32)
    out = ie.compile(
        lambda x: (x.reshape(2, 3, -1).transpose(2, 0, 1) * 3 + 1).max(axis=(1, 2)), [x], **SMALL
    )
    assert out.dtype == np.int32
    assert out.tolist() == (x.reshape(2, 3, 4).transpose(2, 0, 1) * 3 + 1).max(axis=(1, 2)).tolist()


def test_a_decorated_function_compiles_once_per_signature_and_reruns_with_new_inputs():
    calls = []

    @ie.function(**SMALL)
    def scaled(x, y):
        calls.append(x.shape)
        return x * y + 1.0

    a, b = rand(5), rand(5)
    np.testing.assert_allclose(scaled(a, b), a * b + 1, rtol=1e-6)
    first = scaled.last
    c, d = rand(5), rand(5)
    np.testing.assert_allclose(scaled(c, d), c * d + 1, rtol=1e-6)
    assert scaled.last is first and first.engine.run_count == 2
    np.testing.assert_allclose(scaled(rand(2, 3), 2.0 * np.ones((2, 3))).shape, (2, 3))
    assert calls == [(5,), (2, 3)]  # traced once per signature
    assert len(scaled.programs) == 2


def test_device_iterations_loop_on_the_device_over_an_infeed_and_an_outfeed():
    x = rand(8, 3)
    fn = ie.function(lambda x: (x * x).sum(axis=1), device_iterations=4, **SMALL)
    np.testing.assert_allclose(fn(x), (x * x).sum(axis=1), rtol=1e-5)
    total = ie.function(lambda x: x.sum(), device_iterations=4, **SMALL)
    np.testing.assert_allclose(total(x), x.reshape(4, 2, 3).sum(axis=(1, 2)), rtol=1e-5)
    program = fn.last.built.program
    assert [type(p).__name__ for p in program.children()] == ["Repeat"]
    assert program.children()[0].count == 4
    assert {s.name for s in fn.last.graph.streams.values()} == {"infeed0", "outfeed0"}


def test_replicas_each_take_their_slice_of_the_batch_on_their_own_ipus():
    x = rand(6, 4)
    fn = ie.function(lambda x: ops.softmax(x) * 2.0, replication_factor=2, **SMALL)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(fn(x), 2 * e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    graph = fn.last.graph
    assert graph.target.num_ipus == 2
    per_ipu = graph.target.tiles_per_ipu
    # the two replicas' vertices share compute sets, one replica per IPU
    for cs in graph.compute_sets:
        ipus = {int(t) // per_ipu for b in cs.blocks for t in b.tiles}
        assert ipus in (set(), {0, 1})


def test_name_scopes_and_source_lines_reach_the_debug_contexts():
    def model(x):
        with ie.name_scope("layer1"):
            h = ops.relu(x * 3.0)  # the line reports should point at
        return h + 1.0

    line = model.__code__.co_firstlineno + 2
    fn = ie.function(model, **SMALL)
    fn(rand(4))
    contexts = fn.last.graph.debug.items
    relu = [c for c in contexts if c.op == "popnn::relu"]
    assert relu and all(c.layer == "layer1" for c in relu)
    assert relu[0].location[0].endswith("test_frontend_trace.py")
    assert relu[0].location[1] == line
    names = [cs.name for cs in fn.last.graph.compute_sets]
    assert names == ["layer1/mul/map", "layer1/relu/relu/relu", "add/map"]  # + 1.0 is outside


def test_engine_options_target_and_program_name_pass_through():
    fn = ie.function(
        lambda x: x + x,
        ipu_version="ipu1",
        num_ipus=2,
        name="doubling",
        engine_options={"debug.instrument": "true"},
        **SMALL,
    )
    fn(rand(3))
    engine = fn.last.engine
    assert engine.graph.target.version == "ipu1" and engine.graph.target.num_ipus == 2
    assert engine.options["debug.instrument"] is True
    assert engine.executable.programs[0].name == "doubling"


def test_ipu_engine_compile_is_callable_and_still_the_compiler_package():
    import ipu_engine.poplar.compiler.lower as lowering  # dotted paths into the package still work

    assert lowering.__name__ == "ipu_engine.poplar.compiler.lower"
    assert ie.compile(lambda a: a - 1.0, [np.ones(3)]).tolist() == [0.0, 0.0, 0.0]


def test_iterating_a_traced_tensor_gives_its_rows():
    x = rand(3, 2)
    out = ie.compile(lambda x: sum(row * float(i) for i, row in enumerate(x)), [x], **SMALL)
    np.testing.assert_allclose(out, x[1] + 2 * x[2], rtol=1e-6)
