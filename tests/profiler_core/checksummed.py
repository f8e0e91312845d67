"""profile.pop messages as other writers lay them out: ``resealed`` gives a patched message
the checksums a writer of that content would have written (so a test of a reader's own
checks is not stopped by the checksum first); ``as_format_1_1`` is a file from before
checksums; ``flip`` changes a written file as a bad disk would."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from profiler_core.formats.profile_pop import ProfileReader
from profiler_core.formats.profile_pop.checksums import CONTENT, SECTION_CHECKSUM


def resealed(message: Any) -> Any:
    """``message`` with each section's checksum computed from what it decodes to (a section
    that does not decode keeps its old checksum: its own error comes first anyway)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "profile.pop"
        path.write_bytes(message.to_bytes())
        with ProfileReader(path, verify=False) as reader:
            for entry in message.checksums:
                try:
                    content = getattr(reader, CONTENT.get(entry.section, entry.section))
                except Exception:
                    continue
                entry.crc32 = SECTION_CHECKSUM[entry.section](content)
    return message


def as_format_1_1(message: Any) -> bytes:
    """The same report as a 1.1 writer wrote it: no checksums, minor version 1."""
    message.disown("checksums")
    message.formatMinor = 1
    return message.to_bytes()


def flip(path: Path, needle: bytes, at: int, mask: int = 0x01) -> None:
    """Change one bit of byte ``at`` of the only place ``needle`` occurs in ``path``."""
    data = bytearray(path.read_bytes())
    assert data.count(needle) == 1, "the test needs bytes that occur once in the file"
    data[data.index(needle) + at] ^= mask
    path.write_bytes(bytes(data))
