"""operation_contexts and outermost_op_calls (numpy pointer jumping) against walks written
out by hand, on random context trees with damaged parents (forward, self and out-of-range
ids)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from profiler_core.analysis.debug_groups import operation_contexts, outermost_op_calls
from profiler_core.model.lazy_columns import StringColumn


class Debug:
    def __init__(self, parent: list[int], op: list[str], api: list[str]) -> None:
        self.parent = np.array(parent, dtype=np.int64)
        self.op, self.api = StringColumn.from_list(op), StringColumn.from_list(api)

    def __len__(self) -> int:
        return len(self.parent)


def by_hand(debug: Debug) -> list[int]:
    """Follow parents that precede their child up to the first op call (its API is its
    op); a context with no op call on that chain is its own owner."""
    owners = []
    for child in range(len(debug)):
        at = child
        while True:
            if debug.op[at] and debug.api[at] == debug.op[at]:
                owners.append(at)
                break
            up = int(debug.parent[at])
            if not 0 <= up < at:
                owners.append(child)
                break
            at = up
    return owners


@pytest.mark.parametrize("seed", range(50))
def test_random_trees_with_damaged_parents(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 60)
    parent = [
        rng.choice([-1, rng.randint(-1, max(i - 1, -1)), rng.randint(-5, n + 5)]) for i in range(n)
    ]
    op = [rng.choice(["", "poplin::matMul", "popops::add"]) for _ in range(n)]
    api = [rng.choice([o, "", "poplar::Graph"]) for o in op]
    debug = Debug(parent, op, api)
    assert operation_contexts(debug).tolist() == by_hand(debug)


def outermost_by_hand(debug: Debug) -> list[int]:
    """Follow parents that precede their child to the root, keeping the last op call met;
    a context with no op call on that chain is its own owner."""
    owners = []
    for child in range(len(debug)):
        at, found = child, child
        while True:
            if debug.op[at] and debug.api[at] == debug.op[at]:
                found = at
            up = int(debug.parent[at])
            if not 0 <= up < at:
                break
            at = up
        owners.append(found)
    return owners


@pytest.mark.parametrize("seed", range(50))
def test_outermost_op_calls_on_random_trees_with_damaged_parents(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 60)
    parent = [
        rng.choice([-1, rng.randint(-1, max(i - 1, -1)), rng.randint(-5, n + 5)]) for i in range(n)
    ]
    op = [rng.choice(["", "onnx::Conv", "poplin::matMul", "popops::add"]) for _ in range(n)]
    api = [rng.choice([o, "", "poplar::Graph"]) for o in op]
    debug = Debug(parent, op, api)
    ids = np.arange(n, dtype=np.int64)
    assert outermost_op_calls(debug, ids).tolist() == outermost_by_hand(debug)
    assert outermost_op_calls(debug, np.array([-1, n + 3])).tolist() == [-1, -1]


def test_outermost_op_calls_of_a_200000_deep_chain():
    # a chain 0 <- 1 <- ... <- n-1 with op calls at 10 and 100: every context from 10 down
    # belongs to 10, the ones above it to themselves (by hand); pointer jumping takes
    # log2(n) passes where a step per level took n (the 200,000-deep file)
    n = 200_000
    op = [""] * n
    op[10] = op[100] = "popops::add"
    debug = Debug([-1, *range(n - 1)], op, op)
    got = outermost_op_calls(debug, np.arange(n))
    assert got[:10].tolist() == list(range(10))
    assert (got[10:] == 10).all()
