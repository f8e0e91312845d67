"""Host ends of streams: circular buffers and callbacks, with Poplar's FIFO semantics.

``engine.connect_stream(name, array)`` treats the array as a circular buffer: each copy
takes (or fills) the next ``num_elements`` and wraps at the end. A callback receives a
fresh array to fill (host to device) or the copied data (device to host).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ipu_engine import pvti
from ipu_engine.common.arguments import host_values
from ipu_engine.common.errors import StreamError
from ipu_engine.poplar.access import Access, Memory, RunsAccess
from ipu_engine.poplar.streams import DataStream, StreamDirection


class CircularBuffer:
    """Host memory connected to a stream, read or written in order and wrapping."""

    def __init__(self, stream: DataStream, data: np.ndarray) -> None:
        to_host = stream.direction is StreamDirection.DEVICE_TO_HOST
        if to_host and not isinstance(data, np.ndarray):
            raise StreamError(
                f"stream {stream.name!r} writes into host memory: connect a numpy array of "
                f"dtype {stream.type.numpy_dtype}, not a {type(data).__name__}"
            )
        if to_host and data.dtype != stream.type.numpy_dtype:
            raise StreamError(
                f"stream {stream.name!r} writes {stream.type!r} values but the connected "
                f"array is {data.dtype}; pass an array of dtype {stream.type.numpy_dtype}"
            )
        # Poplar reads the host buffer as the stream's type; converting is ours, so only
        # where no value changes
        data = host_values(data, stream.type, f"stream {stream.name!r}: the host data", StreamError)
        n = stream.num_elements
        if n and (data.size < n or data.size % n):
            raise StreamError(
                f"stream {stream.name!r} moves {n} elements per copy; the connected buffer "
                f"has {data.size}, which is not a non-zero multiple of {n}"
            )
        if stream.direction is StreamDirection.DEVICE_TO_HOST and not data.flags.writeable:
            raise StreamError(f"stream {stream.name!r} needs a writable array to copy into")
        self.stream = stream
        self.flat = data.reshape(-1)
        if stream.direction is StreamDirection.DEVICE_TO_HOST and not np.shares_memory(
            self.flat, data
        ):
            raise StreamError(
                f"stream {stream.name!r}: the connected array must be contiguous so that "
                "results land in it"
            )
        self.position = 0

    def pull(self, n: int) -> np.ndarray:
        with pvti.Tracepoint(pvti.tracePoplar, f"StreamCopy {self.stream.name}"):
            out = self.flat[self.position : self.position + n]
            self.position = (self.position + n) % max(self.flat.size, 1)
            return out

    def push(self, values: np.ndarray) -> None:
        with pvti.Tracepoint(pvti.tracePoplar, f"StreamCopy {self.stream.name}"):
            n = values.size
            self.flat[self.position : self.position + n] = values
            self.position = (self.position + n) % max(self.flat.size, 1)

    def push_from(self, source: Access | RunsAccess, memory: Memory) -> None:
        """``push`` of ``source``'s values, copied from memory straight into the buffer."""
        with pvti.Tracepoint(pvti.tracePoplar, f"StreamCopy {self.stream.name}"):
            n = source.size
            source.read_into(memory, self.flat[self.position : self.position + n])
            self.position = (self.position + n) % max(self.flat.size, 1)


class CallbackStream:
    """A stream whose host end is a Python function."""

    def __init__(self, stream: DataStream, callback: Callable[[np.ndarray], object]) -> None:
        if not callable(callback):
            raise StreamError(f"stream {stream.name!r}: the callback is not callable")
        self.stream = stream
        self.callback = callback
        self.position = 0

    def pull(self, n: int) -> np.ndarray:
        buffer = np.zeros(n, dtype=self.stream.type.numpy_dtype)
        self.callback(buffer)
        return buffer

    def push(self, values: np.ndarray) -> None:
        self.callback(np.array(values, copy=True))

    def push_from(self, source: Access | RunsAccess, memory: Memory) -> None:
        self.push(source.read(memory))
