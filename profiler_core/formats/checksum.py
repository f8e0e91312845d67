"""XXH3-64 over a canonical stream of typed values: the checksums of profile.pop sections,
debug.cbor and .pvti event batches. ``xxhash`` hashes at memory speed (~5x zlib's CRC-32
here) and releases the GIL over large buffers, so checking a file costs a fraction of one
pass over its memory, off the window's thread (``benchmarks/bench_checksums.py``)."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import xxhash


class Digest:
    """A running XXH3-64 over typed, length-prefixed values (so "ab","c" != "a","bc")."""

    def __init__(self) -> None:
        self._hash = xxhash.xxh3_64()

    @property
    def value(self) -> int:
        """The checksum so far: an unsigned 64-bit integer."""
        return self._hash.intdigest()

    def _add(self, data: Any) -> None:
        self._hash.update(data)

    def raw(self, data: Any) -> None:
        self._add(struct.pack("<Q", memoryview(data).nbytes))
        self._add(data)

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


def as_signed64(value: int) -> int:
    """An unsigned 64-bit checksum as the signed integer SQLite's INTEGER holds."""
    return value - (1 << 64) if value >= 1 << 63 else value
