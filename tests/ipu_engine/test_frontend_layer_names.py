"""Weights are named by where their layer lives, so two layers share a weight only when
they are one layer object -- as PyTorch's named_parameters() -- and a name clash that would
share is an error naming both layers."""

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import nn
from ipu_engine.common.errors import GraphError

X = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)


def dense(x, layer):
    return x.astype(np.float64) @ layer.weight + layer.bias


def test_two_unnamed_linear_layers_outside_a_sequential_keep_their_own_weights():
    first, second = nn.Linear(5, 5, seed=1), nn.Linear(5, 5, seed=2)
    out = ie.compile(lambda x: second(nn.ReLU()(first(x))), [X])
    intended = dense(np.maximum(dense(X, first), 0), second)
    np.testing.assert_allclose(out, intended, rtol=1e-5, atol=1e-5)
    shared = dense(np.maximum(dense(X, first), 0), first)  # what main computed before
    assert np.abs(out - shared).max() > 0.1


def test_the_same_layer_object_called_twice_shares_its_weight():
    layer = nn.Linear(5, 5, seed=1)
    out = ie.compile(lambda x: layer(layer(x)), [X])
    np.testing.assert_allclose(out, dense(dense(X, layer), layer), rtol=1e-5, atol=1e-5)


def test_unnamed_layers_get_the_next_free_name_and_keep_it_for_the_next_trace():
    first, second = nn.Linear(5, 5, seed=1), nn.Linear(5, 5, seed=2)
    program = ie.function(lambda x: second(first(x)))
    program(X)
    assert (first.name, second.name) == ("linear", "linear_1")
    names = set(program.last.traced.trace.params)
    assert names == {"linear.weight", "linear.bias", "linear_1.weight", "linear_1.bias"}
    program(np.concatenate([X, X]))  # a new signature traces again: the same names
    assert set(program.last.traced.trace.params) == names


def test_two_layers_the_user_named_alike_are_an_error_naming_both():
    first = nn.Linear(5, 5, name="fc", seed=1)
    second = nn.Linear(5, 5, name="fc", seed=2)
    with pytest.raises(GraphError) as error:
        ie.compile(lambda x: second(first(x)), [X])
    text = str(error.value)
    assert "two different layers are called 'fc'" in text
    assert "Linear('fc') first called at test_frontend_layer_names.py:" in text
    assert "share one set of weights" in text


def test_two_unnamed_sequentials_in_one_function_keep_their_own_weights():
    a = nn.Sequential(nn.Linear(5, 3, seed=1), nn.ReLU())
    b = nn.Sequential(nn.Linear(5, 3, seed=2), nn.ReLU())
    out = ie.compile(lambda x: a(x) + b(x), [X])
    expected = np.maximum(dense(X, a.layers[0]), 0) + np.maximum(dense(X, b.layers[0]), 0)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


class TwoLayerNet(nn.Layer):
    """A model written as PyTorch users write modules: layers held in attributes."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.fc1 = nn.Linear(5, 8, seed=seed + 1)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3, seed=seed + 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_a_layer_of_layers_names_its_weights_by_attribute_path_as_named_parameters():
    net = TwoLayerNet()
    assert list(net.parameters()) == [
        "twolayernet.fc1.weight",
        "twolayernet.fc1.bias",
        "twolayernet.fc2.weight",
        "twolayernet.fc2.bias",
    ]
    program = ie.function(net)
    out = program(X)
    assert set(program.last.traced.trace.params) == set(net.parameters())
    expected = dense(np.maximum(dense(X, net.fc1), 0), net.fc2)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_two_instances_of_one_model_class_do_not_share_weights():
    first, second = TwoLayerNet(seed=0), TwoLayerNet(seed=10)
    out = ie.compile(lambda x: first(x) + second(x), [X])

    def reference(net):
        return dense(np.maximum(dense(X, net.fc1), 0), net.fc2)

    np.testing.assert_allclose(out, reference(first) + reference(second), rtol=1e-5, atol=1e-5)
    assert second.name == "twolayernet_1"


def test_a_layer_of_layers_trains_as_the_same_sequential_does():
    net = TwoLayerNet(seed=4)
    chain = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    chain.layers[0].weight[...], chain.layers[0].bias[...] = net.fc1.weight, net.fc1.bias
    chain.layers[2].weight[...], chain.layers[2].bias[...] = net.fc2.weight, net.fc2.bias
    x = np.random.default_rng(5).standard_normal((6, 5)).astype(np.float32)
    labels = np.array([0, 1, 2, 0, 1, 2], np.int32)
    options = {"tiles_per_ipu": 16}
    train_net = ie.training_model(net, ie.SGD(lr=0.2), **options)
    train_chain = ie.training_model(chain, ie.SGD(lr=0.2), **options)
    losses = [(train_net(x, labels), train_chain(x, labels)) for _ in range(3)]
    for mine, reference in losses:
        assert mine == pytest.approx(reference, rel=1e-6)
    np.testing.assert_allclose(net.fc2.weight, chain.layers[2].weight, rtol=1e-6)
    assert losses[-1][0] < losses[0][0]  # it learned


def test_half_reaches_the_layers_a_layer_holds_in_its_attributes():
    net = TwoLayerNet().half()
    assert {v.dtype for v in net.parameters().values()} == {np.dtype(np.float16)}
    out = ie.compile(net, [X.astype(np.float16)])
    assert out.dtype == np.float16
