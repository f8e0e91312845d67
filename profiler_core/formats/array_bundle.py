"""Array bundles: named numpy arrays plus a small CBOR description, in one checked file.

The engine's executable cache keeps its entries in this format (never pickle). Layout:

```
magic   8 bytes  b"PVBUNDLE"
digest 32 bytes  blake2b-256 of everything after it
length  8 bytes  little-endian uint64: bytes of the CBOR header that follows
header  CBOR     {"kind": str, "formatMajor": int, "formatMinor": int, "meta": plain data,
                  "arrays": [[name, dtype.str, [shape...], offset, nbytes], ...]}
data             the arrays' little-endian C-order bytes, each at ``offset`` (8-aligned)
```

Reading verifies the digest before decoding anything, refuses CBOR tags and deep nesting,
and checks each array's dtype (numeric little-endian only), shape, size and bounds, so a
damaged or hostile file is a ``ReportError`` naming it, never a crash.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import cbor2
import numpy as np

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.atomic import atomic_write
from profiler_core.formats.files import regular_file_size
from profiler_core.formats.strict_cbor import refusal_reason, strict_decoder

MAGIC = b"PVBUNDLE"
_DIGEST_BYTES = 32
_PREFIX = len(MAGIC) + _DIGEST_BYTES + 8
_ALIGN = 8
_MAX_NESTING = 16
# numeric dtypes a bundle may hold: no objects, strings, structs or big-endian data
_DTYPES = frozenset(
    np.dtype(t).str for t in ("<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4", "<u8")
) | frozenset(np.dtype(t).str for t in ("<f2", "<f4", "<f8", "|b1", "|i1", "|u1"))


@dataclass(frozen=True)
class Bundle:
    """What a bundle file holds: its description and its arrays (read-only views)."""

    kind: str
    format_major: int
    format_minor: int
    meta: Any
    arrays: dict[str, np.ndarray]


def _plain(value: Any) -> bytes:
    return cbor2.dumps(value, canonical=True)


def encode_bundle(
    kind: str, version: tuple[int, int], meta: Any, arrays: Mapping[str, np.ndarray]
) -> bytes:
    """The bytes of a bundle file (see the module docstring)."""
    table, chunks, offset = [], [], 0
    for name, array in arrays.items():
        data = np.ascontiguousarray(array)
        if data.dtype.byteorder == ">":
            data = data.astype(data.dtype.newbyteorder("<"))
        if data.dtype.str not in _DTYPES:
            raise ValueError(f"array {name!r}: dtype {data.dtype} cannot go into a bundle")
        raw = data.tobytes()
        pad = -offset % _ALIGN
        chunks.append(b"\0" * pad)
        offset += pad
        table.append([name, data.dtype.str, list(data.shape), offset, len(raw)])
        chunks.append(raw)
        offset += len(raw)
    header = _plain(
        {
            "kind": kind,
            "formatMajor": version[0],
            "formatMinor": version[1],
            "meta": meta,
            "arrays": table,
        }
    )
    body = len(header).to_bytes(8, "little") + header + b"".join(chunks)
    digest = hashlib.blake2b(body, digest_size=_DIGEST_BYTES).digest()
    return MAGIC + digest + body


def write_bundle(
    path: str | Path, kind: str, version: tuple[int, int], meta: Any, arrays: Mapping[str, Any]
) -> None:
    """Write a bundle atomically: a reader sees the old file or the whole new one. An OS
    problem (read-only folder, full disk) is a ``ReportError`` naming ``path``."""
    data = encode_bundle(kind, version, meta, arrays)

    def write(file: BinaryIO) -> None:
        file.write(data)

    atomic_write(path, write)


def read_bundle(path: str | Path, kind: str, major: int, max_bytes: int) -> Bundle:
    """The bundle at ``path``, checked; ``kind`` and ``major`` must be what the caller
    writes, and files over ``max_bytes`` are refused before reading."""
    path = Path(path)
    try:
        size = regular_file_size(path)
        if size > max_bytes:
            raise ReportError(path, f"is {size} bytes, over the {max_bytes} a bundle may have")
        data = path.read_bytes()
    except OSError as error:
        raise ReportError(path, f"cannot read: {error.strerror or error}") from error
    return decode_bundle(path, data, kind, major)


def decode_bundle(path: Path, data: bytes, kind: str, major: int) -> Bundle:
    if len(data) < _PREFIX:
        raise ReportError(path, f"truncated: {len(data)} bytes, not a bundle")
    if data[: len(MAGIC)] != MAGIC:
        raise ReportError(path, "not a bundle file (wrong magic bytes)")
    body = memoryview(data)[len(MAGIC) + _DIGEST_BYTES :]
    expected = data[len(MAGIC) : len(MAGIC) + _DIGEST_BYTES]
    if hashlib.blake2b(body, digest_size=_DIGEST_BYTES).digest() != expected:
        raise ReportError(path, "checksum mismatch: the file is damaged or was cut short")
    header_len = int.from_bytes(body[:8], "little")
    if header_len > len(body) - 8:
        raise ReportError(path, f"header of {header_len} bytes runs past the file's end")
    header = _decode_header(path, body[8 : 8 + header_len])
    if header.get("kind") != kind:
        raise ReportError(path, f"holds {header.get('kind')!r}, not {kind!r}")
    got_major, got_minor = header.get("formatMajor"), header.get("formatMinor")
    if not isinstance(got_major, int) or not isinstance(got_minor, int):
        raise ReportError(path, "the header has no format version")
    if got_major != major:
        raise FormatVersionError(
            path, f"format version {got_major}.{got_minor}; this reader knows version {major}"
        )
    arrays = _arrays(path, header.get("arrays"), body[8 + header_len :])
    return Bundle(kind, got_major, got_minor, header.get("meta"), arrays)


def _decode_header(path: Path, raw: memoryview) -> dict[str, Any]:
    stream = io.BytesIO(raw)
    try:
        header = strict_decoder(stream, "a bundle", _MAX_NESTING).decode()
    except (cbor2.CBORError, ValueError, TypeError, OverflowError, LookupError) as error:
        reason = refusal_reason(error)
        raise ReportError(path, f"the header is not valid CBOR: {reason}") from error
    except (RecursionError, MemoryError) as error:
        raise ReportError(path, "the header is nested too deeply or too large") from error
    if stream.tell() != len(raw) or not isinstance(header, dict):
        raise ReportError(path, "the header is not one CBOR map")
    return header


def _arrays(path: Path, table: Any, data: memoryview) -> dict[str, np.ndarray]:
    if not isinstance(table, list):
        raise ReportError(path, "the header has no array table")
    arrays: dict[str, np.ndarray] = {}
    for row in table:
        if not (isinstance(row, list) and len(row) == 5):
            raise ReportError(path, f"array table row {row!r:.80} is not [name, dtype, ...]")
        name, dtype, shape, offset, nbytes = row
        if not isinstance(name, str) or name in arrays:
            raise ReportError(path, f"array name {name!r:.80} is not a new text")
        if dtype not in _DTYPES:
            raise ReportError(path, f"array {name!r}: dtype {dtype!r:.40} is not allowed")
        ok_shape = isinstance(shape, list) and len(shape) <= 8
        if not ok_shape or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ReportError(path, f"array {name!r}: shape {shape!r:.80} is not a shape")
        if not (isinstance(offset, int) and isinstance(nbytes, int) and offset >= 0):
            raise ReportError(path, f"array {name!r}: bad offset or size")
        itemsize = np.dtype(dtype).itemsize
        if int(np.prod(shape, dtype=object)) * itemsize != nbytes:
            raise ReportError(path, f"array {name!r}: {nbytes} bytes do not fit shape {shape}")
        if offset + nbytes > len(data):
            raise ReportError(path, f"array {name!r} runs past the end of the file")
        array = np.frombuffer(data[offset : offset + nbytes], dtype=np.dtype(dtype))
        if dtype == "|b1" and array.size and array.view(np.uint8).max() > 1:
            raise ReportError(path, f"array {name!r}: booleans other than 0 and 1")
        arrays[name] = array.reshape(shape)
    return arrays
