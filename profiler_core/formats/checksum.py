"""CRC-32 (zlib's, in the standard library) over a canonical stream of typed values: the
checksums of profile.pop sections, debug.cbor and .pvti event batches. zlib releases the
GIL over large buffers, so the window's loader worker checks a file while the window goes
on (``benchmarks/bench_checksums.py`` measures what checking adds to opening)."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np


class Digest:
    """A running CRC-32 over typed, length-prefixed values (so "ab","c" != "a","bc")."""

    def __init__(self) -> None:
        self._crc = 0

    @property
    def value(self) -> int:
        """The checksum so far: an unsigned 32-bit integer."""
        return self._crc

    def _add(self, data: Any) -> None:
        self._crc = zlib.crc32(data, self._crc)

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
