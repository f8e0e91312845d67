"""float16 end to end in the front-end (issue 26, point 2): half weights, activations and
outputs; matmul partials in float32 (Poplar's default) or half; the report's bytes and
cycles. References are numpy computations and hand counts, never the engine's own."""

from pathlib import Path

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import nn, ops
from ipu_engine.common.errors import OptionError, TypeMismatchError
from profiler_core.insights import insights
from profiler_core.report import open_report

RNG = np.random.default_rng(26)


def report_options(folder: Path) -> dict:
    return {"autoReport.all": "true", "autoReport.directory": str(folder)}


def half_accumulated(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` with the running sum held in half: each exact half x half product is
    added in float32 and the sum rounded back to half, along k in order."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float16)
    for j in range(a.shape[1]):
        product = np.outer(a[:, j].astype(np.float32), b[j, :].astype(np.float32))
        acc = (acc.astype(np.float32) + product).astype(np.float16)
    return acc


def float_accumulated(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` of half matrices summed in float64 (exact enough) and rounded to half once."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)


# -- the material's half listing --------------------------------------------------------------
def test_the_half_precision_listing_returns_float16_close_to_a_half_reference():
    # PopTorch chapter: model.half(); x.half(); out = inferenceModel(model)(x);
    # assert out.dtype == torch.float16 and out is close to the model run in half
    model = nn.Sequential(nn.Linear(16, 32, seed=1), nn.ReLU(), nn.Linear(32, 4, seed=2))
    model.half()
    x = RNG.standard_normal((8, 16)).astype(np.float16)
    out = ie.inference_model(model)(x)
    assert out.dtype == np.float16
    first, second = model.layers[0], model.layers[2]
    assert first.weight.dtype == second.bias.dtype == np.float16
    hidden = np.maximum(float_accumulated(x, first.weight) + first.bias, np.float16(0))
    reference = float_accumulated(hidden, second.weight) + second.bias
    np.testing.assert_allclose(out.astype(np.float32), reference, rtol=2e-3, atol=2e-3)


def test_the_tensorflow_listing_casts_to_half_inside_the_function():
    # TF chapter: x = tf.cast(x, tf.float16) inside the function; the result is float16
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    w = RNG.standard_normal((8, 3)).astype(np.float32)

    def model(x, w):
        y = x.astype(np.float16) @ w.astype(np.float16)
        return y, y.astype(np.float32)

    half, back = ie.compile(model, [x, w])
    assert half.dtype == np.float16 and back.dtype == np.float32
    expected = float_accumulated(x.astype(np.float16), w.astype(np.float16))
    np.testing.assert_array_equal(half, expected)
    np.testing.assert_array_equal(back, expected.astype(np.float32))


# -- numpy's promotion rules -------------------------------------------------------------------
@pytest.mark.parametrize(
    "other",
    [
        np.full(3, 0.1, np.float16),  # half op half -> half
        np.full(3, 0.1, np.float32),  # half op float32 -> float32
        0.1,  # a Python scalar takes the tensor's type
        np.float32(0.1),  # a numpy scalar promotes (NEP 50)
    ],
    ids=["half", "float32", "python-scalar", "numpy-float32-scalar"],
)
def test_half_arithmetic_promotes_as_numpy(other):
    x = np.array([1.5, -2.25, 1000.0], np.float16)
    expected_add, expected_mul = x + other, x * other  # numpy is the oracle
    if isinstance(other, np.ndarray):
        got_add, got_mul = ie.compile(lambda a, b: (a + b, a * b), [x, other])
    else:
        got_add, got_mul = ie.compile(lambda a: (a + other, a * other), [x])
    assert got_add.dtype == expected_add.dtype and got_mul.dtype == expected_mul.dtype
    np.testing.assert_array_equal(got_add, expected_add)
    np.testing.assert_array_equal(got_mul, expected_mul)


def test_half_activations_stay_half_through_library_ops():
    x = RNG.standard_normal((6, 10)).astype(np.float16)
    out = ie.compile(lambda x: ops.softmax(ops.relu(x) * 2.0 + 1.0), [x])
    assert out.dtype == np.float16
    z = np.maximum(x, np.float16(0)) * np.float16(2) + np.float16(1)
    e = np.exp(z.astype(np.float32) - z.astype(np.float32).max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=4e-3, atol=1e-3)


# -- matmul partials -----------------------------------------------------------------------------
def partials_inputs() -> tuple[np.ndarray, np.ndarray]:
    # products of [0, 1) values summed over k = 512: sums near 128, where half's spacing
    # (0.0625-0.125) loses most of each product if the running sum is half
    a = RNG.uniform(0, 1, (8, 512)).astype(np.float16)
    b = RNG.uniform(0, 1, (512, 4)).astype(np.float16)
    return a, b


@pytest.mark.parametrize("tiles", [1, None], ids=["one-tile", "split-over-the-ipu"])
def test_half_matmul_with_float_partials_is_accumulated_in_float(tiles):
    a, b = partials_inputs()
    out = ie.compile(lambda a, b: a @ b, [a, b], tiles_per_ipu=tiles)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, float_accumulated(a, b))
    assert np.any(out != half_accumulated(a, b))  # the two precisions do differ here


def test_half_matmul_with_half_partials_is_accumulated_in_half():
    a, b = partials_inputs()
    by_option = ie.compile(lambda a, b: a @ b, [a, b], tiles_per_ipu=1, partials_type="half")
    per_op = ie.compile(
        lambda a, b: ops.matmul(a, b, partials_type="half"), [a, b], tiles_per_ipu=1
    )
    expected = half_accumulated(a, b)
    np.testing.assert_array_equal(by_option, expected)
    np.testing.assert_array_equal(per_op, expected)
    assert np.any(expected != float_accumulated(a, b))


def test_a_matmul_can_ask_for_float_partials_in_a_half_partials_model():
    a, b = partials_inputs()
    out = ie.compile(
        lambda a, b: ops.matmul(a, b, partials_type="float"),
        [a, b],
        tiles_per_ipu=1,
        partials_type="half",
    )
    np.testing.assert_array_equal(out, float_accumulated(a, b))


# -- the report ------------------------------------------------------------------------------------
def variable_bytes(folder: Path) -> dict[str, int]:
    graph = open_report(folder).graph
    return dict(zip(graph.strings.take(graph.var_name), graph.var_bytes.tolist(), strict=True))


@pytest.mark.parametrize(
    ("dtype", "size"), [(np.float32, 4), (np.float16, 2)], ids=["float32", "float16"]
)
def test_a_half_models_weights_and_activations_take_two_bytes_each(tmp_path, dtype, size):
    model = nn.Sequential(nn.Linear(24, 40, name="fc1"), nn.ReLU(), nn.Linear(40, 8, name="fc2"))
    model.to(dtype)
    x = RNG.standard_normal((16, 24)).astype(dtype)
    ie.inference_model(model, engine_options=report_options(tmp_path), name="mlp")(x)
    found = variable_bytes(tmp_path / "mlp")
    assert found["fc1.weight"] == 24 * 40 * size
    assert found["fc1.bias"] == 40 * size
    assert found["fc2.weight"] == 40 * 8 * size
    assert found["x"] == 16 * 24 * size
    assert found["fc1/matmul"] == found["relu1/relu"] == 16 * 40 * size  # activations
    assert found["fc2/add"] == 16 * 8 * size


def test_following_the_fp16_insight_with_model_half_removes_it(tmp_path):
    rules = {}
    for dtype in (np.float32, np.float16):
        model = nn.Sequential(nn.Linear(256, 128, name="fc")).to(dtype)
        name = np.dtype(dtype).name
        infer = ie.inference_model(model, engine_options=report_options(tmp_path), name=name)
        infer(np.ones((4, 256), dtype))
        found = insights(open_report(tmp_path / name)).findings
        rules[name] = {f.rule: f for f in found}
    # the float32 weights (256 x 128 x 4 bytes) are named as a half candidate...
    advice = rules["float32"]["fp16-candidates"]
    assert {e.label: e.value for e in advice.evidence}["FP32 bytes"] == 256 * 128 * 4
    assert "fp16-candidates" not in rules["float16"]  # ...and are half once converted


def test_split_k_partials_take_the_partials_types_bytes(tmp_path):
    a, b = partials_inputs()
    sizes = {}
    for partials in ("float", "half"):
        name = f"partials_{partials}"
        ie.compile(
            lambda a, b: a @ b,
            [a, b],
            partials_type=partials,
            engine_options=report_options(tmp_path),
            name=name,
        )
        found = variable_bytes(tmp_path / name)
        sizes[partials] = found["partials"]
    # [depth, 8, 4] partials: 4 bytes each in float, 2 in half
    depth = sizes["float"] // (8 * 4 * 4)
    assert depth > 1
    assert sizes["half"] == depth * 8 * 4 * 2


@pytest.mark.parametrize(
    ("dtype", "partials", "macs_per_cycle"),
    [(np.float32, "float", 16), (np.float16, "float", 32), (np.float16, "half", 64)],
    ids=["float", "half-in-float-partials", "half-in-half-partials"],
)
def test_matmul_cycles_follow_the_amp_rate_of_the_type(tmp_path, dtype, partials, macs_per_cycle):
    a = RNG.standard_normal((16, 64)).astype(dtype)
    b = RNG.standard_normal((64, 32)).astype(dtype)
    ie.compile(
        lambda a, b: a @ b,
        [a, b],
        tiles_per_ipu=1,
        partials_type=partials,
        engine_options=report_options(tmp_path),
        name="mm",
    )
    report = open_report(tmp_path / "mm")
    graph, programs = report.graph, report.programs
    convolve = [
        i
        for i, cs in enumerate(programs.step_cs.tolist())
        if cs >= 0 and graph.strings[int(graph.cs_name[cs])].endswith("Convolve")
    ]
    assert len(convolve) == 1
    # one tile, one block: a supervisor's 100 cycles + M*K*N MACs at the AMP's rate
    expected = 100 + 16 * 64 * 32 // macs_per_cycle
    assert programs.step_cycles[convolve[0]].tolist() == [expected]


# -- training --------------------------------------------------------------------------------------
def test_half_training_updates_half_weights_in_half():
    # y = x @ w + b with w = [1, 1], b = 0; x = [1, 1], target 1.75: y - t = 0.25 and the
    # MSE gradient is 2 * 0.25 = 0.5 for each weight and the bias. lr = 1e-4 moves them by
    # -5e-5: below half the spacing of half at 1.0 (2**-11), so the weights stay 1.0,
    # while the bias at 0 takes the step (rounded to half).
    def step(dtype):
        layer = nn.Linear(2, 1, seed=0, dtype=dtype)
        layer.weight[...] = 1.0
        layer.bias[...] = 0.0
        train = ie.training_model(nn.Sequential(layer), ie.SGD(lr=1e-4), nn.MSELoss())
        loss = train(np.ones((1, 2), dtype), np.full((1, 1), 1.75, dtype))
        return loss, layer

    loss, layer = step(np.float16)
    assert loss == pytest.approx(0.0625)
    assert layer.weight.dtype == layer.bias.dtype == np.float16
    np.testing.assert_array_equal(layer.weight, np.ones((2, 1), np.float16))
    expected_bias = np.float16(-1e-4) * np.float16(0.5)  # scaledAdd in half
    np.testing.assert_array_equal(layer.bias, [expected_bias])
    _, single = step(np.float32)
    np.testing.assert_allclose(single.weight, np.full((2, 1), 1 - 5e-5), rtol=1e-7)


def test_a_pipelined_replicated_half_classifier_trains_with_cross_entropy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 8)).astype(np.float16)
    labels = (x[:, 0] > 0).astype(np.int32)
    second = nn.begin_block(nn.Linear(16, 2, seed=2), 1)
    model = nn.Sequential(nn.Linear(8, 16, seed=1), nn.ReLU(), second).half()
    train = ie.training_model(
        model, ie.SGD(lr=0.5), nn.CrossEntropyLoss(), replication_factor=2, gradient_accumulation=2
    )
    losses = [train(x, labels) for _ in range(6)]
    assert losses[-1] < 0.7 * losses[0]
    assert all(p.dtype == np.float16 for p in model.parameters().values())
    first, other = train.replica_weights()
    for name, value in first.items():
        np.testing.assert_array_equal(value, other[name])


# -- clear errors ----------------------------------------------------------------------------------
def test_bad_partials_types_and_weight_types_are_named():
    with pytest.raises(OptionError, match="option 'partials_type' must be 'float' or 'half'"):
        ie.Options(partials_type="double")
    a, b = partials_inputs()
    with pytest.raises(OptionError, match=r"test_frontend_half\.py:\d+: partials_type must be"):
        ie.compile(lambda a, b: ops.matmul(a, b, partials_type="fp8"), [a, b])
    with pytest.raises(TypeMismatchError, match="fc: weights are float16 or float32"):
        nn.Linear(2, 2, name="fc", dtype=np.float64)
    with pytest.raises(TypeMismatchError, match="sequential.to: weights are float16 or float32"):
        nn.Sequential(nn.Linear(2, 2)).to(np.int32)
