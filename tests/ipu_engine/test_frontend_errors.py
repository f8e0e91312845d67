"""Mistakes in traced code are EngineErrors that point at the user's file and line."""

import inspect

import numpy as np
import pytest

import ipu_engine as ie
from ipu_engine import EngineError, GraphError, ShapeError, ShardError, TypeMismatchError, ops

SMALL = {"tiles_per_ipu": 4}


def line_of(fn, text: str) -> int:
    """The line number of the first line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_adding_unbroadcastable_shapes_names_the_line_and_both_shapes():
    def model(x, y):
        h = x * 2.0
        return h + y  # the bad add

    line = line_of(model, "the bad add")
    expected = f"test_frontend_errors.py:{line}: cannot add float[3,4] and float[5]"
    with pytest.raises(ShapeError) as info:
        ie.compile(model, [np.ones((3, 4)), np.ones(5)], **SMALL)
    assert str(info.value) == expected
    assert isinstance(info.value, EngineError)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (
            lambda x, y: x @ y,
            "cannot multiply float[3,4] by float[5] (inner dimensions 4 and 5 differ)",
        ),
        (lambda x, y: x.sum(axis=2) + y, "sum over axis 2 of float[3,4]: no such axis"),
        (lambda x, y: x.reshape(5, -1) + y, "cannot reshape float[3,4] to (5, -1)"),
        (lambda x, y: ops.softmax(x, axis=0) + y, "only the last axis is supported"),
    ],
)
def test_shape_errors_of_other_ops_point_at_the_callers_line(fn, message):
    with pytest.raises(ShapeError) as info:
        ie.compile(fn, [np.ones((3, 4)), np.ones(5)], **SMALL)
    assert str(info.value).startswith(f"test_frontend_errors.py:{fn.__code__.co_firstlineno}: ")
    assert message in str(info.value)


def test_mixing_element_types_asks_for_a_conversion():
    with pytest.raises(TypeMismatchError, match=r"\.py:\d+: cannot add float\[2\] and int\[2\]"):
        ie.compile(lambda x, k: x + k, [np.ones(2, np.float32), np.ones(2, np.int32)], **SMALL)


def test_python_control_flow_on_a_traced_value_is_explained():
    def branchy(x):
        if x.sum():
            return x
        return -x

    with pytest.raises(GraphError, match="no value while the function is traced"):
        ie.compile(branchy, [np.ones(2)], **SMALL)


def test_comparisons_are_refused_rather_than_silently_false():
    with pytest.raises(GraphError, match="comparing float\\[2\\] is not supported"):
        ie.compile(lambda x, y: x * (x == y), [np.ones(2), np.ones(2)], **SMALL)


def test_a_shard_beyond_the_targets_ipus_is_a_shard_error_at_the_with_line():
    def sharded(a, b):
        with ie.shard(0):
            c = a + b
        with ie.shard(4):  # one too far
            return c * 2.0

    with pytest.raises(ShardError) as info:
        ie.compile(sharded, [np.ones(2), np.ones(2)], num_ipus=4, **SMALL)
    line = line_of(sharded, "one too far")
    assert str(info.value) == (
        f"test_frontend_errors.py:{line}: shard 4 is beyond the target's IPUs: ipu2 has "
        "4 IPUs (shards 0..3)"
    )


def test_a_negative_shard_is_refused():
    with pytest.raises(ShardError, match="must be an integer >= 0"):
        ie.shard(-1)


def test_a_batch_that_does_not_split_into_micro_batches_is_named():
    fn = ie.function(lambda x: x * 2.0, device_iterations=4, **SMALL)
    with pytest.raises(ShapeError, match=r"input 'x' has shape \(6, 2\).*4 micro-batches"):
        fn(np.ones((6, 2)))


def test_returning_something_else_than_a_tensor_is_refused():
    with pytest.raises(GraphError, match="must return tensors"):
        ie.compile(lambda x: 3.0, [np.ones(2)], **SMALL)


def test_unknown_options_are_option_errors():
    with pytest.raises(ie.OptionError, match="unknown option 'num_ipu'"):
        ie.function(lambda x: x, num_ipu=2)
    with pytest.raises(ie.OptionError, match="replication_factor=3"):
        ie.Options(num_ipus=4, replication_factor=3)
