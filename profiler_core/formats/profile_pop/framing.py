"""What opening a ``profile.pop`` checks before Cap'n Proto sees it: a regular file of a
sane size, stream framing that agrees with that size (so a cut file says "truncated after N
of M bytes" instead of a C++ error), then the magic and a major version this reader knows."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.files import regular_file_size
from profiler_core.formats.profile_pop.file_bytes import FileBytes
from profiler_core.formats.profile_pop.schema import MAGIC
from profiler_core.model.profile import FORMAT_MAJOR, FORMAT_MINOR

MAX_PROFILE_BYTES = 64 * 1024**3
"""Larger files are refused before reading: no honest profile.pop comes near it."""
MAX_SEGMENTS = 512  # the C++ library's own limit on segments per message


def read_file(path: Path, on_demand: bool) -> FileBytes:
    """The file's bytes, read only after its segment table agrees with its size, so a huge
    file that is not a profile (a disk image, gigabytes of zeros) is refused at once."""
    try:
        size = regular_file_size(path)
        if size > MAX_PROFILE_BYTES:
            raise ReportError(
                path, f"is {size} bytes, over the {MAX_PROFILE_BYTES} a profile.pop may have"
            )
        # Unbuffered and read into place: no buffered head joined to the rest, no copy.
        file = open(path, "rb", buffering=0)  # noqa: SIM115 -- FileBytes keeps it open
        try:
            head = file.read(4 * (MAX_SEGMENTS + 2))
            check_framing(path, head, size)
            file.seek(0)
            return FileBytes(path, file, size, releasable=on_demand)
        except BaseException:
            file.close()
            raise
    except OSError as error:
        raise ReportError(path, f"cannot read: {error.strerror or error}") from error
    except MemoryError as error:
        raise ReportError(path, "not enough memory to read it") from error


def check_framing(path: Path, data: bytes, size: int | None = None) -> list[tuple[int, int]]:
    """Check the stream framing against the file's length (``size``, else ``len(data)``:
    ``data`` may be only the file's first bytes); return (first byte, length) of each
    segment.

    Done before capnp sees the bytes, so a cut file says "truncated" instead of a C++ error.
    """
    size = len(data) if size is None else size
    if not size:
        raise ReportError(path, "is empty, not a profile.pop")
    if size < 8:
        raise ReportError(path, f"truncated: {size} bytes is too short for a profile.pop")
    segments = struct.unpack_from("<I", data, 0)[0] + 1
    if segments > MAX_SEGMENTS:
        raise ReportError(path, "not a profile.pop (not a Cap'n Proto message)")
    table_bytes = 4 * (segments + 1) + 4 * (segments % 2 == 0)
    if size < table_bytes:
        raise ReportError(path, f"truncated after {size} bytes, inside the segment table")
    sizes = struct.unpack_from(f"<{segments}I", data, 4)
    expected = table_bytes + 8 * sum(sizes)
    if size < expected:
        raise ReportError(path, f"truncated after {size} of {expected} bytes")
    if size > expected:
        raise ReportError(
            path, f"has {size - expected} bytes after the end of its message: not one profile"
        )
    starts = table_bytes + 8 * np.concatenate(([0], np.cumsum(sizes[:-1], dtype=np.int64)))
    return [(int(start), 8 * size) for start, size in zip(starts, sizes, strict=True)]


def check_magic_and_version(path: Path, magic: str, major: int, minor: int) -> None:
    if magic != MAGIC:
        raise ReportError(path, f"not a popvision-py profile (magic {magic[:40]!r})")
    if major > FORMAT_MAJOR:
        raise FormatVersionError(
            path,
            f"written in profile format {major}.{minor}, but this popvision-py reads format "
            f"{FORMAT_MAJOR} (up to {FORMAT_MAJOR}.{FORMAT_MINOR}); update popvision-py",
        )
    if major < 1:
        raise ReportError(path, f"unknown profile format version {major}.{minor}")
