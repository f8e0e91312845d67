"""Infeeds and outfeeds: the host-to-device and device-to-host FIFOs of a framework program.

One stream per input (or output) carries every replica's micro-batch in one stream copy:
the device end is the replicas' tensors joined in replica order, so the host array is
simply the batch in order -- iteration, replica, then the rows of each micro-batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.common.errors import ShapeError
from ipu_engine.common.types import Type
from ipu_engine.frontend.contexts import HOST_LAYER, INFEED, OUTFEED, framework_op_scope
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Copy
from ipu_engine.poplar.streams import DataStream
from ipu_engine.poplar.tensor import Tensor, concat


@dataclass(frozen=True)
class Feed:
    """A FIFO and what one copy through it moves: every replica's ``type[shape]``."""

    name: str
    stream: DataStream
    type: Type
    shape: tuple[int, ...]  # of one replica's micro-batch
    replicas: int


def _joined(tensors: list[Tensor]) -> Tensor:
    return concat([t.flatten() for t in tensors]) if len(tensors) > 1 else tensors[0].flatten()


def add_infeed(graph: Graph, name: str, tensors: list[Tensor]) -> tuple[Feed, Copy]:
    """A host-to-device FIFO filling ``tensors`` (one per replica) with each copy."""
    first = tensors[0]
    with framework_op_scope(graph, INFEED, name, HOST_LAYER):  # its copies are the infeed's
        stream = graph.add_host_to_device_fifo(name, first.type, first.num_elements * len(tensors))
    feed = Feed(name, stream, first.type, first.shape, len(tensors))
    return feed, Copy(stream, _joined(tensors), name=f"infeed/{name}")


def add_outfeed(graph: Graph, name: str, tensors: list[Tensor]) -> tuple[Feed, Copy]:
    """A device-to-host FIFO taking ``tensors`` (one per replica) with each copy."""
    first = tensors[0]
    with framework_op_scope(graph, OUTFEED, name, HOST_LAYER):
        stream = graph.add_device_to_host_fifo(name, first.type, first.num_elements * len(tensors))
    feed = Feed(name, stream, first.type, first.shape, len(tensors))
    return feed, Copy(_joined(tensors), stream, name=f"outfeed/{name}")


def micro_batch_shape(
    array: np.ndarray, micro_batches: int, what: str, counts: str
) -> tuple[int, ...]:
    """The shape of one micro-batch of ``array``, whose first axis holds them all."""
    if micro_batches == 1:
        return tuple(array.shape)
    if array.ndim == 0 or array.shape[0] % micro_batches:
        raise ShapeError(
            f"{what} has shape {tuple(array.shape)}: its first axis must split into "
            f"{micro_batches} micro-batches ({counts})"
        )
    return (array.shape[0] // micro_batches, *array.shape[1:])


def host_input(array: np.ndarray, feed: Feed) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=feed.type.numpy_dtype)


def host_output(flat: np.ndarray, copies: int, feed: Feed) -> np.ndarray:
    """The outfeed's values as the caller expects: one micro-batch as traced, several
    joined along the first axis (scalars become a vector), as PopTorch returns them."""
    count = copies * feed.replicas
    if count == 1:
        return flat.reshape(feed.shape)
    if not feed.shape:
        return flat.reshape(count)
    return flat.reshape(count * feed.shape[0], *feed.shape[1:])
