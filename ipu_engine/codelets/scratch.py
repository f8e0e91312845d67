"""Scratch arrays a codelet reuses from one run to the next, instead of allocating its
temporaries each time: a fresh array of a few MB is fresh pages from the system, zeroed
and faulted in on every run, which cost a depthwise convolution more than its products.

One buffer per purpose and thread, grown to the largest request and shared by every
compute set (they run one after another), so the engine's memory grows with the
largest temporary, not with the number of layers. A caller must not hold a scratch array
across another codelet's call, nor ask for the same purpose twice at once.
"""

from __future__ import annotations

import threading

import numpy as np

_LOCAL = threading.local()


def scratch(purpose: str, shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape``, reused for ``purpose``."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buffers = getattr(_LOCAL, "buffers", None)
    if buffers is None:
        buffers = _LOCAL.buffers = {}
    buffer = buffers.get(purpose)
    if buffer is None or buffer.size < size:
        buffer = buffers[purpose] = np.empty(max(size, 1), np.uint8)
    return buffer[:size].view(dtype).reshape(shape)
