"""The bytes of a JSON trace file, bounded: at most ``max_bytes`` of decoded data, a gzip
stream inflated as it is read with its expansion bounded, never a FIFO or device opened.
What ``json_events`` reads a Chrome trace through."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import BinaryIO

from profiler_core.errors import ReportError
from profiler_core.formats.files import regular_file_size

#: a Chrome JSON trace is streamed (memory holds a chunk and the event columns, not the
#: document), so its limit is far above whole-document JSON's DEFAULT_MAX_BYTES
MAX_TRACE_BYTES = 4 << 30
#: a gzip stream may expand this much before it is taken for a bomb (text traces gzip ~10-30x)
MAX_GZIP_RATIO = 200
_GZIP_MAGIC = b"\x1f\x8b"


class LimitedReader:
    """Reads at most ``max_bytes`` of decoded data; a gzip stream is inflated as it is read,
    with its expansion bounded."""

    def __init__(self, raw: BinaryIO, path: Path, max_bytes: int) -> None:
        self.raw, self.path, self.max_bytes = raw, path, max_bytes
        self.total = 0
        head = raw.read(2)
        self.inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if head == _GZIP_MAGIC else None
        self.pending = head if self.inflate is None else self.inflate.decompress(head)
        self.compressed = len(head)

    def read(self, n: int) -> bytes:
        out = self.pending
        self.pending = b""
        while len(out) < n:
            if self.inflate is not None and self.inflate.unconsumed_tail:
                raw = b""  # inflate what an earlier read left over before reading more
            else:
                raw = self.raw.read(n if self.inflate is None else max(n // 16, 1 << 16))
                if not raw:
                    break
                self.compressed += len(raw)
            if self.inflate is None:
                out += raw
            else:
                out += self._inflate(raw, n - len(out))
        if len(out) > n:
            out, self.pending = out[:n], out[n:]
        self.total += len(out)
        if self.total > self.max_bytes:
            raise ReportError(
                self.path,
                f"over the {self.max_bytes / 2**20:.0f} MiB limit for JSON traces (pass a larger "
                "max_bytes to open it anyway)",
            )
        return out

    def _inflate(self, raw: bytes, want: int) -> bytes:
        try:
            out = self.inflate.decompress(raw or self.inflate.unconsumed_tail, max(want, 1 << 16))
            while self.inflate.unconsumed_tail and len(out) < want:
                out += self.inflate.decompress(self.inflate.unconsumed_tail, want - len(out))
        except zlib.error as exc:
            raise ReportError(self.path, f"damaged gzip stream: {exc}") from None
        if self.total + len(out) > MAX_GZIP_RATIO * max(self.compressed, 1 << 16):
            raise ReportError(
                self.path,
                f"gzip stream expands more than {MAX_GZIP_RATIO}x: refused as a decompression bomb",
            )
        return out

    def read_rest(self, limit: int = 1 << 20) -> bytes:
        """What follows, up to ``limit`` bytes (the document's keys after the events)."""
        return self.read(limit)


def open_trace(path: Path) -> BinaryIO:
    try:
        regular_file_size(path)  # never opens a FIFO or device
        return open(path, "rb")
    except FileNotFoundError:
        raise ReportError(path, "no such file") from None
    except OSError as exc:
        raise ReportError(path, f"cannot be read: {exc.strerror or exc}") from None
