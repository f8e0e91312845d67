"""What a path a user gave holds -- a report, a host trace (.pvti, a folder of them, Chrome
trace JSON plain or gzip), or neither -- told by its content, never by its name: the one
place the CLI, ``pva``, the window's open dialog, drag-and-drop, the command line and a
finished Run/Record ask. PyTorch's profiler and viztracer write ``*.json.gz``; a trace
renamed ``run.log`` is still a trace.

A name only decides who explains a file that is neither: one named like a trace
(``*.pvti``, ``*.json``, ``*.gz``) goes to the trace reader, which says why it cannot be
read ("empty file", "truncated", ...), anything else to the report reader.
"""

from __future__ import annotations

import enum
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from profiler_core.formats.files import is_regular_file
from profiler_core.formats.pvti.sqlite_file import is_sqlite

#: the first bytes of a gzip stream (RFC 1952)
GZIP_MAGIC = b"\x1f\x8b"
#: bytes read to tell a file (a gzip header may carry a file name and a comment first)
HEAD_BYTES = 64 << 10
#: decoded bytes a gzip stream is opened to before its first character is looked at
_PEEK_BYTES = 4096
_JSON_SPACE = b"\xef\xbb\xbf \t\r\n"  # a UTF-8 byte-order mark, then JSON's white space
_TRACE_NAMES = (".pvti", ".json", ".gz")
REPORT_FILES = ("profile.pop", "archive.a")


class FileKind(enum.Enum):
    REPORT = "a report"
    PVTI = "a .pvti trace"
    PVTI_FOLDER = "a folder of .pvti traces"
    CHROME_JSON = "Chrome trace JSON"
    NEITHER = "neither a trace nor a report"


TRACE_KINDS = frozenset((FileKind.PVTI, FileKind.PVTI_FOLDER, FileKind.CHROME_JSON))


@dataclass(frozen=True)
class Recognised:
    """What ``recognise`` found at ``path``: its kind, whether a gzip stream holds it, and
    for NEITHER what it is instead (said to the user); ``unreadable`` when its content could
    not be looked at (missing, a FIFO, no permission) or there is none."""

    path: Path
    kind: FileKind
    gzip: bool = False
    why_not: str = ""
    unreadable: bool = False

    @property
    def is_trace(self) -> bool:
        return self.kind in TRACE_KINDS

    @property
    def goes_to_trace_reader(self) -> bool:
        """A trace, or a file that is neither but is named like one: the trace reader is
        the one to say what is wrong with it."""
        if self.is_trace:
            return True
        if self.kind is not FileKind.NEITHER or self.path.is_dir():
            return False
        return self.path.name.lower().endswith(_TRACE_NAMES)

    def describe(self) -> str:
        """The kind in words, e.g. "Chrome trace JSON (gzip)"; for NEITHER what it is."""
        if self.kind is FileKind.NEITHER and self.why_not:
            return self.why_not
        return f"{self.kind.value} (gzip)" if self.gzip else self.kind.value


def recognise(path: str | Path) -> Recognised:
    """What ``path`` holds, by content. Never blocks (a FIFO or device is not opened) and
    never raises for a path that cannot be read: that is NEITHER, saying why."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # links followed; a loop or no permission: said
        if stat.S_ISDIR(mode):
            return _folder(path)
        if not stat.S_ISREG(mode):
            return _unreadable(path, "is not a regular file (a device, FIFO or socket)")
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
    except FileNotFoundError:
        return _unreadable(path, "no such file")
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        return _unreadable(path, f"cannot be read: {getattr(exc, 'strerror', None) or exc}")
    return _file(path, head)


def _unreadable(path: Path, why: str) -> Recognised:
    return Recognised(path, FileKind.NEITHER, why_not=why, unreadable=True)


def _folder(path: Path) -> Recognised:
    names = [p.name for p in path.iterdir()]
    if any(name in REPORT_FILES for name in names):
        return Recognised(path, FileKind.REPORT)
    if any(name.endswith(".pvti") and is_regular_file(path / name) for name in names):
        return Recognised(path, FileKind.PVTI_FOLDER)
    return Recognised(path, FileKind.NEITHER, why_not="a folder with no report and no .pvti")


def _file(path: Path, head: bytes) -> Recognised:
    if not head:
        return _unreadable(path, "empty file: neither a trace nor a report")
    if is_sqlite(head):
        return Recognised(path, FileKind.PVTI)
    if head.startswith(GZIP_MAGIC):
        text = gunzip_head(head)
        if text is None:
            return Recognised(path, FileKind.NEITHER, True, "a damaged gzip stream")
        if starts_like_json(text):
            return Recognised(path, FileKind.CHROME_JSON, gzip=True)
        inside = "something that is not JSON" if text.strip(_JSON_SPACE) else "no text"
        return Recognised(path, FileKind.NEITHER, True, f"gzip of {inside}")
    if starts_like_json(head):
        return Recognised(path, FileKind.CHROME_JSON)
    if path.name == REPORT_FILES[0]:
        return Recognised(path, FileKind.REPORT)
    return Recognised(path, FileKind.NEITHER, why_not="not SQLite, JSON or gzip")


def starts_like_json(head: bytes) -> bool:
    """Whether ``head`` begins, after white space, with a JSON object or array: a Chrome
    trace's two forms (``{"traceEvents": ...}`` and the bare array)."""
    return head.lstrip(_JSON_SPACE)[:1] in (b"{", b"[")


def gunzip_head(head: bytes) -> bytes | None:
    """The first decoded bytes of the gzip stream starting ``head`` (fewer when it is
    short); None when it is not a gzip stream zlib can decode."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        return inflate.decompress(head, _PEEK_BYTES)
    except zlib.error:
        return None
