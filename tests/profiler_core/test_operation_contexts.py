"""operation_contexts (numpy pointer jumping) against a walk written out by hand,
on random context trees with damaged parents (forward, self and out-of-range ids)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from profiler_core.analysis.debug_groups import operation_contexts
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
