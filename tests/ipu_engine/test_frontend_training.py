"""Training on the device -- forward, explicit backward, SGD -- matches a numpy model step by
step, and replication / gradient accumulation / device iterations keep it equal to one
big-batch step."""

import itertools

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import nn
from ipu_engine.poplar.compiler.steps import StepKind
from ipu_engine.poplar.cost_model.compile_model import build_compile_model
from tests.ipu_engine.conftest import steps_under

TILES = {"tiles_per_ipu": 32}
RNG = np.random.default_rng(7)


def synthetic(n: int, features: int = 6, classes: int = 3):
    """Points labelled by which of ``classes`` random directions they lie furthest along."""
    x = RNG.standard_normal((n, features)).astype(np.float32)
    directions = np.random.default_rng(1).standard_normal((features, classes))
    return x, np.argmax(x @ directions, axis=1).astype(np.int32)


def mlp(features: int = 6, hidden: int = 10, classes: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(features, hidden, seed=11), nn.ReLU(), nn.Linear(hidden, classes, seed=12)
    )


class NumpyMLP:
    """The same two-layer MLP, softmax cross-entropy and SGD, written with numpy alone."""

    def __init__(self, weights: dict, lr: float) -> None:
        self.w = {k: v.astype(np.float64) for k, v in weights.items()}
        self.lr = lr

    def forward(self, x):
        w = self.w
        h = x @ w["linear0.weight"] + w["linear0.bias"]
        a = np.maximum(h, 0)
        return h, a, a @ w["linear2.weight"] + w["linear2.bias"]

    def step(self, x, y) -> float:
        h, a, z = self.forward(x)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        loss = -np.log(p[rows, y]).mean()
        dz = p.copy()
        dz[rows, y] -= 1
        dz /= len(y)
        dh = (dz @ self.w["linear2.weight"].T) * (h > 0)
        grads = {
            "linear2.weight": a.T @ dz,
            "linear2.bias": dz.sum(axis=0),
            "linear0.weight": x.T @ dh,
            "linear0.bias": dh.sum(axis=0),
        }
        for k, g in grads.items():
            self.w[k] -= self.lr * g
        return float(loss)


def test_mlp_training_lowers_the_loss_and_matches_numpy_step_by_step():
    model = mlp()
    reference = NumpyMLP(model.parameters(), lr=0.5)
    train = ie.training_model(model, ie.SGD(lr=0.5), nn.CrossEntropyLoss(), **TILES)
    x, y = synthetic(64)
    epoch_losses = []
    for _ in range(4):
        losses = []
        for batch in range(4):
            rows = slice(batch * 16, (batch + 1) * 16)
            loss = train(x[rows], y[rows])
            expected = reference.step(x[rows].astype(np.float64), y[rows])
            assert abs(loss - expected) < 1e-4
            for name, value in model.parameters().items():
                np.testing.assert_allclose(value, reference.w[name], atol=1e-4)
            losses.append(loss)
        epoch_losses.append(np.mean(losses))
    assert epoch_losses[-1] < epoch_losses[0] - 0.1
    assert all(b < a for a, b in itertools.pairwise(epoch_losses))


@pytest.mark.parametrize(
    ("replicas", "accumulation", "iterations"), [(2, 1, 1), (4, 1, 1), (2, 2, 3), (1, 3, 2)]
)
def test_replicas_and_accumulation_equal_one_big_batch_step(replicas, accumulation, iterations):
    model = mlp()
    reference = NumpyMLP(model.parameters(), lr=0.3)
    train = ie.training_model(
        model,
        ie.SGD(lr=0.3),
        replication_factor=replicas,
        gradient_accumulation=accumulation,
        device_iterations=iterations,
        **TILES,
    )
    per_update = 4 * replicas * accumulation
    x, y = synthetic(per_update * iterations)
    losses = train(x, y)
    expected = [
        reference.step(
            x[i * per_update : (i + 1) * per_update].astype(np.float64),
            y[i * per_update : (i + 1) * per_update],
        )
        for i in range(iterations)
    ]
    np.testing.assert_allclose(losses, expected if iterations > 1 else expected[0], atol=1e-5)
    replica_weights = train.replica_weights()
    assert len(replica_weights) == replicas
    for weights in replica_weights:  # the all-reduce left every replica the same weights
        for name, value in weights.items():
            np.testing.assert_array_equal(value, replica_weights[0][name])
            np.testing.assert_allclose(value, reference.w[name], atol=1e-5)


def test_the_gradient_all_reduce_crosses_between_the_replicas_ipus():
    train = ie.training_model(mlp(), ie.SGD(lr=0.1), replication_factor=4, **TILES)
    train(*synthetic(16))
    exe = train.engine.executable
    per_ipu = train.graph.target.tiles_per_ipu
    ring = [s for s in exe.steps if s.kind is StepKind.GLOBAL_EXCHANGE and "allReduce" in s.name]
    assert len(ring) == 2 * (4 - 1)  # reduce-scatter then all-gather, R-1 steps each
    for step in ring:
        traffic = step.facts["traffic"]
        senders = {
            int(t) // per_ipu for t, n in zip(traffic.tiles, traffic.bytes_out, strict=True) if n
        }
        assert senders == {0, 1, 2, 3}  # every replica sends a chunk round the ring at once
    adds = [cs for cs in train.graph.compute_sets if "reduceScatter" in cs.name]
    assert {int(t) // per_ipu for cs in adds for b in cs.blocks for t in b.tiles} == {0, 1, 2, 3}


def test_mse_training_with_sharded_blocks_matches_numpy():
    first = nn.Linear(4, 5, seed=3)
    second = nn.begin_block(nn.Linear(5, 2, seed=4), ipu_id=1)
    model = nn.Sequential(first, nn.Tanh(), second)
    w = {k: v.astype(np.float64) for k, v in model.parameters().items()}
    train = ie.training_model(
        model, ie.SGD(lr=0.2), nn.MSELoss(), execution_strategy="sharded", **TILES
    )
    x = RNG.standard_normal((8, 4)).astype(np.float32)
    target = RNG.standard_normal((8, 2)).astype(np.float32)
    for _ in range(3):
        h = np.tanh(x @ w["linear0.weight"] + w["linear0.bias"])
        pred = h @ w["linear2.weight"] + w["linear2.bias"]
        expected = ((pred - target) ** 2).mean()
        d = 2 * (pred - target) / pred.size
        dh = (d @ w["linear2.weight"].T) * (1 - h**2)
        for k, g in {
            "linear2.weight": h.T @ d,
            "linear2.bias": d.sum(0),
            "linear0.weight": x.T @ dh,
            "linear0.bias": dh.sum(0),
        }.items():
            w[k] -= 0.2 * g
        assert abs(train(x, target) - expected) < 1e-5
    graph = train.graph
    assert graph.target.num_ipus == 2
    per_ipu = graph.target.tiles_per_ipu
    for name, ipu in (("linear0.weight", 0), ("linear2.weight", 1)):
        tensor = train.session.built.params[name][0]
        assert set((graph.tile_array(tensor) // per_ipu).tolist()) == {ipu}


def test_inference_uses_the_models_current_weights_and_pipelines_its_blocks():
    layers = [nn.Linear(6, 6, seed=20 + i) for i in range(4)]
    model = nn.Sequential(
        layers[0], nn.begin_block(layers[1], 1), nn.begin_block(layers[2], 2),
        nn.begin_block(layers[3], 3), nn.Softmax(),
    )  # fmt: skip
    infer = ie.inference_model(model, device_iterations=4, **TILES)
    x = RNG.standard_normal((4 * 3, 6)).astype(np.float32)

    def numpy_forward():
        h = x
        for layer in layers:
            h = h @ layer.weight + layer.bias
        e = np.exp(h - h.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    np.testing.assert_allclose(infer(x), numpy_forward(), rtol=1e-5)
    assert [r.label for r in infer.last.built.extra["schedule"]][3] == "steadyState"
    layers[0].weight *= 0.5  # the host model changed: the next call runs the new weights
    np.testing.assert_allclose(infer(x), numpy_forward(), rtol=1e-5)


def pipelined_mlp() -> nn.Sequential:
    """The same MLP in two pipeline stages: linear0 + relu on IPU 0, linear2 on IPU 1."""
    return nn.Sequential(
        nn.Linear(6, 10, seed=11), nn.ReLU(), nn.begin_block(nn.Linear(10, 3, seed=12), 1)
    )


def test_pipelined_training_equals_one_big_batch_step_per_update():
    model = pipelined_mlp()
    reference = NumpyMLP(model.parameters(), lr=0.3)
    train = ie.training_model(
        model,
        ie.SGD(lr=0.3),
        replication_factor=2,
        gradient_accumulation=3,
        device_iterations=2,
        **TILES,
    )
    per_update = 4 * 2 * 3
    x, y = synthetic(per_update * 2)
    losses = train(x, y)
    expected = [
        reference.step(
            x[i * per_update : (i + 1) * per_update].astype(np.float64),
            y[i * per_update : (i + 1) * per_update],
        )
        for i in range(2)
    ]
    np.testing.assert_allclose(losses, expected, atol=1e-5)
    for weights in train.replica_weights():
        for name, value in weights.items():
            np.testing.assert_allclose(value, reference.w[name], atol=1e-5)
    assert train.graph.target.num_ipus == 4  # 2 replicas x 2 stages


def test_pipelined_training_overlaps_forward_and_backward_and_stashes_locally():
    train = ie.training_model(pipelined_mlp(), ie.SGD(lr=0.3), gradient_accumulation=6, **TILES)
    train(*synthetic(6 * 4))
    runs = train.session.built.extra["schedule"]
    # forward 0, forward 1, loss + backward 1, backward 0: four stages on two IPUs
    assert [(r.label, r.stages, r.count) for r in runs][3] == ("steadyState", (0, 1, 2, 3), 3)
    exe = train.engine.executable
    cycles = build_compile_model(train.graph, exe, False).step_cycles
    steady = steps_under(exe, "steadyState")
    computes = [s for s in steady if s.kind is StepKind.ON_TILE_EXECUTE and s.compute_set >= 0]
    # both IPUs compute in one step: stage 0's forward and backward on IPU 0 beside stage 1's
    assert any((cycles[s.id] > 0).all() for s in computes)
    # per steady step only these cross the IPU-Links: the labels (4 int32 = 16 bytes) and
    # stage 0's activations [4, 10] (160 bytes) going to IPU 1, and their gradient [4, 10]
    # coming back. The input and activations stage 0's backward needs wait on IPU 0.
    crossing = [s for s in steady if s.kind is StepKind.GLOBAL_EXCHANGE]
    assert sum(s.facts["traffic"].total_bytes for s in crossing) == 16 + 160 + 160
