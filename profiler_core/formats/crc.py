"""CRC-32 over a canonical stream of typed values: the checksums of profile.pop sections,
debug.cbor and .pvti event batches. ``zlib.crc32`` is C and releases the GIL over large
buffers, so checking a file costs about one pass over its memory, off the window's thread."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np


class Digest:
    """A running CRC-32 over typed, length-prefixed values (so "ab","c" != "a","bc")."""

    def __init__(self) -> None:
        self.crc = 0

    def _add(self, data: Any) -> None:
        self.crc = zlib.crc32(data, self.crc)

    def raw(self, data: Any) -> None:
        self._add(struct.pack("<Q", memoryview(data).nbytes))
        self._add(data)  # zlib releases the GIL over large buffers: a worker stays parallel

    def text(self, value: object) -> None:
        self.raw(str(value).encode("utf-8", "surrogatepass"))

    def integer(self, value: object) -> None:
        self._add(int(value).to_bytes(16, "little", signed=True))

    def real(self, value: object) -> None:
        self._add(struct.pack("<d", float(value)))

    def array(self, name: str, array: np.ndarray) -> None:
        self.text(name)
        self.text(array.dtype.str)
        self.integer(array.ndim)
        for size in array.shape:
            self.integer(size)
        self.raw(memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8)))

    def pairs(self, mapping: dict[Any, Any]) -> None:
        self.integer(len(mapping))
        for key, value in mapping.items():
            self.text(key)
            self.text(value)
