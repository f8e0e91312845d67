"""Optimizers: how a weight update is built on the device from the summed gradients."""

from __future__ import annotations

from dataclasses import dataclass

from ipu_engine import popops
from ipu_engine.common.errors import OptionError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence
from ipu_engine.poplar.tensor import Tensor


@dataclass(frozen=True)
class SGD:
    """Plain stochastic gradient descent: ``w -= lr * mean gradient``."""

    lr: float

    def __post_init__(self) -> None:
        if not self.lr > 0:
            raise OptionError(f"SGD needs a learning rate > 0, got {self.lr!r}")

    def update(
        self, graph: Graph, weight: Tensor, grad_sum: Tensor, count: int, prog: Sequence, name: str
    ) -> None:
        """``weight -= lr * grad_sum / count`` in place (popops' scaledAddTo), where the sum
        is over ``count`` micro-batches (accumulated and across replicas)."""
        popops.scaled_add_to(graph, weight, grad_sum, -self.lr / count, prog, name)
