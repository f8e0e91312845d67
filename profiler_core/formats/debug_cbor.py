"""``debug.cbor``: a report's debug contexts as one CBOR map of typed columns.

Version 2 (written): ``{"magic": "popvision-py debug", "formatMajor": 2, "formatMinor": 1,
"reportId": str, "count": N, "strings": {"offsets": bytes, "data": bytes},
"columns": {"name", "layer", "op", "api", "file", "args", "parent", "line": bytes},
"crc32": int}``.
``strings`` is one UTF-8 table (``offsets``: little-endian int64, one more than strings);
each column is N little-endian int32: an index into the table for the text columns, the
JSON text of the arguments (-1 for none), the parent context (-1 for none), the line.
Reading is a few array views, so 400,000 contexts open without a Python object each.
Since 2.1, ``crc32`` is an CRC-32 of the version, report id, count, string table and columns
(``content_checksum``): a file changed after writing is refused rather than shown with other
names. Version 2.0 and version 1 files (a list per column, ``debug_cbor_v1``) are still
read, with a note that damage cannot be detected. Reading refuses oversized files, CBOR
tags and deep nesting, and names every problem.
"""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path
from typing import Any

import cbor2
import numpy as np

from profiler_core.errors import ChecksumError, FormatVersionError, ReportError
from profiler_core.formats import debug_cbor_v1 as v1
from profiler_core.formats.atomic import atomic_write
from profiler_core.formats.cbor_views import loads_plain
from profiler_core.formats.checksum import Digest
from profiler_core.formats.files import regular_file_size
from profiler_core.formats.strict_cbor import refusal_reason, strict_decoder
from profiler_core.model.lazy_columns import JsonColumn, StringColumn
from profiler_core.model.profile import DebugData, Header
from profiler_core.model.strings import StringInterner, Strings

MAGIC = "popvision-py debug"
FORMAT_MAJOR = 2
FORMAT_MINOR = 1  # 2.1: crc32
CHECKSUMS_SINCE_MINOR = 1
MAX_DEBUG_BYTES = 2 * 1024**3
"""Larger files are refused before reading: no honest debug.cbor comes near it."""
MAX_NESTING = v1.MAX_NESTING
COLUMNS = v1.COLUMNS
TEXT_COLUMNS = v1.TEXT_COLUMNS
_MAX_CONTEXTS = 2**31 - 1


# -- writing -----------------------------------------------------------------------------
def write_debug(path: str | Path, debug: DebugData, format_major: int = FORMAT_MAJOR) -> None:
    """Write ``debug`` to ``path`` (normally ``<report>/debug.cbor``) atomically, in format
    ``format_major`` (2; 1 for readers of older popvision-py).

    Raises ``ReportError`` naming ``path`` when the columns are inconsistent or an argument
    is not JSON-like, or when the file cannot be written.
    """
    path = Path(path)
    contexts = v1.contexts_of(debug)
    try:
        v1.check_contexts(contexts)
    except v1.DocumentError as problem:
        raise ReportError(path, f"cannot write: {problem}") from None
    header = {"magic": MAGIC, "reportId": str(debug.report_id)}
    if format_major == 1:
        document = {**header, "formatMajor": 1, "formatMinor": 0, "contexts": contexts}
    elif format_major == 2:
        document = {**header, "formatMajor": 2, "formatMinor": FORMAT_MINOR, **_columnar(contexts)}
        document["crc32"] = content_checksum(document)
    else:
        raise ValueError(f"debug.cbor format {format_major} cannot be written")
    atomic_write(path, lambda file: cbor2.dump(document, file))


def _columnar(contexts: dict[str, list[Any]]) -> dict[str, Any]:
    strings = StringInterner()
    columns = {name: strings.many(contexts[name]) for name in TEXT_COLUMNS}
    columns["args"] = np.fromiter(
        (strings(json.dumps(a, separators=(",", ":"))) if a else -1 for a in contexts["args"]),
        dtype=np.int32,
        count=len(contexts["args"]),
    )
    columns["parent"] = np.asarray(contexts["parent"], dtype=np.int32)
    columns["line"] = np.asarray(contexts["line"], dtype=np.int32)
    table = strings.table()
    return {
        "count": len(contexts["name"]),
        "strings": {
            "offsets": table.offsets.astype("<i8").tobytes(),
            "data": bytes(table.blob),
        },
        "columns": {name: column.astype("<i4").tobytes() for name, column in columns.items()},
    }


def content_checksum(document: dict[str, Any]) -> int:
    """CRC-32 of a version 2 document's content: version, report id, count, the string
    table's offsets and data, and each column's bytes in ``COLUMNS`` order. Values of the
    wrong type (a damaged file) go in as their text, so the sum then fails."""
    digest = Digest()
    for key in ("formatMajor", "formatMinor", "reportId", "count"):
        digest.text(document.get(key))
    strings, columns = document.get("strings"), document.get("columns")
    strings = strings if isinstance(strings, dict) else {}
    columns = columns if isinstance(columns, dict) else {}
    for value in (
        strings.get("offsets"),
        strings.get("data"),
        *(columns.get(name) for name in COLUMNS),
    ):
        if isinstance(value, (bytes, memoryview)):
            digest.raw(value)
        else:
            digest.text(repr(value)[:100])
    return digest.value


def _check_sum(document: dict[str, Any], minor: int) -> bool:
    """Raise ChecksumError when a version 2 document fails its crc32; False when it is
    from before checksums (2.0), so the caller notes that damage cannot be detected."""
    stored = document.get("crc32")
    if stored is None and minor < CHECKSUMS_SINCE_MINOR:
        return False
    if not v1.is_int(stored):
        raise ChecksumError(
            None, f"damaged: its crc32 is {str(stored)[:40]!r}, not a checksum (format 2.{minor})"
        )
    computed = content_checksum(document)
    if computed != stored:
        raise ChecksumError(
            None,
            f"damaged: its content fails its checksum (CRC-32 {computed:08x}, written "
            f"{stored % (1 << 64):016x}): the file changed after it was written; write the "
            "report again",
        )
    return True


UNCHECKED_NOTE = (
    "written in debug format {version}, before checksums: damage to it after writing "
    "cannot be detected"
)


# -- reading -----------------------------------------------------------------------------
def read_debug(path: str | Path, verify: bool = True) -> DebugData:
    """Read a ``debug.cbor``; every problem with the file raises ``ReportError`` naming it.
    ``verify=False`` skips the checksum (only to measure what it costs)."""
    path = Path(path)
    data = _read_file(path)
    plain = loads_plain(data)  # version 2 without copying its columns
    document, trailing = plain if plain is not None else _decode(path, data)
    try:
        return _to_debug_data(path, document, trailing, verify)
    except v1.DocumentError as problem:
        raise ReportError(path, str(problem)) from None
    except ChecksumError as error:
        raise ChecksumError(path, error.problem) from None


#: The words a mismatched profile.pop / debug.cbor pair is reported with.
INCOMPLETE_REPORT = "incomplete report"


def check_pair(
    profile_header: Header, debug: DebugData, debug_path: str | Path | None = None
) -> None:
    """Raise ``ReportError`` when ``debug`` was written for another report than the profile."""
    if profile_header.report_id != debug.report_id:
        raise ReportError(
            debug_path,
            f"debug.cbor does not belong to this profile.pop: report ids {debug.report_id!r} "
            f"(debug.cbor) and {profile_header.report_id!r} (profile.pop) differ -- an "
            f"{INCOMPLETE_REPORT}: the program writing it may have stopped between its two "
            "files; run it again",
        )


def _read_file(path: Path) -> bytes:
    try:
        size = regular_file_size(path)
        if size > MAX_DEBUG_BYTES:
            raise ReportError(
                path,
                f"is {size} bytes, over the {MAX_DEBUG_BYTES} bytes a debug.cbor may have "
                "(profiler_core.formats.debug_cbor.MAX_DEBUG_BYTES)",
            )
        return path.read_bytes()
    except OSError as error:
        raise ReportError(path, f"cannot read: {error.strerror or error}") from error
    except MemoryError as error:
        raise ReportError(path, "not enough memory to read it") from error


def _decode(path: Path, data: bytes) -> tuple[Any, int]:
    """The first CBOR item in ``data`` and how many bytes follow it."""
    if not data:
        raise ReportError(path, "is empty, not a debug.cbor")
    stream = io.BytesIO(data)
    try:
        document = strict_decoder(stream, "a debug.cbor", MAX_NESTING).decode()
    except cbor2.CBORDecodeEOF as error:
        raise ReportError(path, f"truncated: {error}") from error
    except (cbor2.CBORError, ValueError, TypeError, OverflowError, LookupError) as error:
        raise ReportError(path, f"not a valid debug.cbor: {refusal_reason(error)}") from error
    except RecursionError as error:
        raise ReportError(path, "not a valid debug.cbor: nested too deeply") from error
    except MemoryError as error:
        raise ReportError(path, "not a valid debug.cbor: too large to decode") from error
    return document, len(data) - stream.tell()


def _to_debug_data(path: Path, document: Any, trailing: int, verify: bool = True) -> DebugData:
    if not isinstance(document, dict) or document.get("magic") != MAGIC:
        magic = document.get("magic") if isinstance(document, dict) else None
        raise v1.DocumentError(f"not a popvision-py debug.cbor (magic {str(magic)[:40]!r})")
    if trailing:
        raise v1.DocumentError(f"has {trailing} bytes after its CBOR map: not one debug.cbor")
    major, minor = document.get("formatMajor"), document.get("formatMinor")
    if not v1.is_int(major) or not v1.is_int(minor) or major < 1:
        raise v1.DocumentError(f"unknown debug format version {major!r}.{minor!r}")
    if major > FORMAT_MAJOR:
        raise FormatVersionError(
            path,
            f"written in debug format {major}.{minor}, but this popvision-py reads formats "
            f"1 and {FORMAT_MAJOR} (up to {FORMAT_MAJOR}.{FORMAT_MINOR}); update popvision-py",
        )
    report_id = document.get("reportId")
    if not isinstance(report_id, str):
        raise v1.DocumentError(f"reportId must be a string, not {v1.type_name(report_id)}")
    if major == 1:
        debug = v1.debug_from_contexts(report_id, document.get("contexts"), path)
    else:
        checked = _check_sum(document, minor) if verify else True
        debug = _from_columns(path, report_id, document)
        if checked:
            return debug
    debug.integrity_note = UNCHECKED_NOTE.format(version=f"{major}.{minor}")
    return debug


def _from_columns(path: Path, report_id: str, document: dict[str, Any]) -> DebugData:
    count = document.get("count")
    if not v1.is_int(count) or not 0 <= count <= _MAX_CONTEXTS:
        raise v1.DocumentError(f"count must be a number of contexts, not {count!r:.40}")
    table = _string_table(document.get("strings"))
    columns = document.get("columns")
    if not isinstance(columns, dict):
        raise v1.DocumentError(f"columns must be a map, not {v1.type_name(columns)}")
    missing = [name for name in COLUMNS if name not in columns]
    if missing:
        raise v1.DocumentError(f"columns lack {', '.join(missing)}")
    arrays = {name: _int32_column(columns[name], name, count) for name in COLUMNS}
    for name in TEXT_COLUMNS:
        _check_range(arrays[name], name, 0, len(table), "a string of the table")
    _check_range(arrays["args"], "args", -1, len(table), "-1 or a string of the table")
    _check_range(arrays["parent"], "parent", -1, count, "-1 or a context")
    text = {name: StringColumn(table, arrays[name]) for name in TEXT_COLUMNS}
    return DebugData(
        report_id=report_id,
        parent=arrays["parent"],
        line=arrays["line"],
        args=JsonColumn(table, arrays["args"], path),
        **text,
    )


def _string_table(strings: Any) -> Strings:
    if not isinstance(strings, dict):
        raise v1.DocumentError(f"strings must be a map, not {v1.type_name(strings)}")
    data, offsets = strings.get("data"), strings.get("offsets")
    if not isinstance(data, (bytes, memoryview)) or not isinstance(offsets, (bytes, memoryview)):
        raise v1.DocumentError("strings must hold 'data' and 'offsets' as byte strings")
    if len(offsets) % 8 or not offsets:
        raise v1.DocumentError(f"strings.offsets has {len(offsets)} bytes, not int64s")
    ends = np.frombuffer(offsets, dtype="<i8")
    if ends[0] != 0 or ends[-1] != len(data) or np.any(np.diff(ends) < 0):
        raise v1.DocumentError(
            f"strings.offsets do not run from 0 up to the {len(data)} bytes of strings.data"
        )
    try:
        _check_utf8(data)
    except UnicodeDecodeError as error:
        raise v1.DocumentError(f"strings.data is not UTF-8 at byte {error.start}") from None
    return Strings(data, ends.astype(np.int64, copy=False))  # a view on little-endian hosts


_UTF8_CHUNK = 1 << 20


def _check_utf8(data: bytes | memoryview) -> None:
    """Raise UnicodeDecodeError (its ``start`` in the whole of ``data``) unless ``data`` is
    UTF-8. Checked a megabyte at a time: decoding the whole table at once holds the GIL for
    as long as it takes, and this runs in a worker beside the window's thread."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(view), _UTF8_CHUNK):
            decoder.decode(view[start : start + _UTF8_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        str(data, "utf-8")  # raises again, with the offset in the whole table


def _int32_column(value: Any, name: str, count: int) -> np.ndarray:
    if not isinstance(value, (bytes, memoryview)):
        raise v1.DocumentError(f"columns.{name} must be bytes, not {v1.type_name(value)}")
    if len(value) != 4 * count:
        raise v1.DocumentError(
            f"columns.{name} has {len(value)} bytes but {count} contexts need {4 * count}"
        )
    return np.frombuffer(value, dtype="<i4").astype(np.int32, copy=False)


def _check_range(values: np.ndarray, name: str, low: int, high: int, wanted: str) -> None:
    bad = np.flatnonzero((values < low) | (values >= high))
    if bad.size:
        index = int(bad[0])
        raise v1.DocumentError(
            f"columns.{name}[{index}] is {int(values[index])}, not {wanted} (below {high})"
        )
