"""``debug.cbor``: a report's debug contexts as one CBOR map of columns, read and written here.

Layout: ``{"magic": "popvision-py debug", "formatMajor": 1, "formatMinor": 0, "reportId": str,
"contexts": {"name": [str], "parent": [int], "layer": [str], "op": [str], "api": [str],
"file": [str], "line": [int], "args": [{str: JSON-like}]}}``, all lists of one length.
Reading refuses oversized files, CBOR tags and deep nesting, and names every problem.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import cbor2
import numpy as np

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.atomic import atomic_write
from profiler_core.model.profile import DebugData, Header

MAGIC = "popvision-py debug"
FORMAT_MAJOR = 1
FORMAT_MINOR = 0
MAX_DEBUG_BYTES = 2 * 1024**3
"""Larger files are refused before reading: no honest debug.cbor comes near it."""
MAX_NESTING = 32
"""Deepest CBOR nesting read; the layout itself needs 4 levels, the rest is for args."""

TEXT_COLUMNS = ("name", "layer", "op", "api", "file")
INT_COLUMNS = ("parent", "line")
COLUMNS = ("name", "parent", "layer", "op", "api", "file", "line", "args")
_I32 = np.iinfo(np.int32)

# Tags cbor2 decodes into Python objects (dates, regexes, sets, shared references that can
# build cycles, ...). None belongs in debug.cbor, so each is refused before it is decoded.
_KNOWN_TAGS = (0, 1, 2, 3, 4, 5, 25, 28, 29, 30, 35, 36, 37, 52, 54, 100, 256, 258, 260, 261)
_KNOWN_TAGS += (1004, 55799)


class _RefusedTagError(ValueError):
    pass


def _refuse_tag(tag: int) -> Any:
    def refuse(*_: object) -> Any:
        raise _RefusedTagError(f"CBOR tag {tag} is not allowed in a debug.cbor")

    return refuse


def _refuse_unknown_tag(*args: object) -> Any:
    # cbor2 5 calls tag_hook(decoder, tag), cbor2 6 calls tag_hook(tag, immutable).
    tag = next((arg.tag for arg in args if isinstance(arg, cbor2.CBORTag)), "?")
    raise _RefusedTagError(f"CBOR tag {tag} is not allowed in a debug.cbor")


_SEMANTIC_DECODERS = {tag: _refuse_tag(tag) for tag in _KNOWN_TAGS}


def write_debug(path: str | Path, debug: DebugData) -> None:
    """Write ``debug`` to ``path`` (normally ``<report>/debug.cbor``) atomically.

    Raises ``ReportError`` naming ``path`` when the columns are inconsistent or an argument
    is not JSON-like, or when the file cannot be written.
    """
    path = Path(path)
    contexts = {
        "name": debug.name,
        "parent": np.asarray(debug.parent).tolist(),
        "layer": debug.layer,
        "op": debug.op,
        "api": debug.api,
        "file": debug.file,
        "line": np.asarray(debug.line).tolist(),
        "args": debug.args,
    }
    try:
        _check_contexts(contexts)
    except _DocumentError as problem:
        raise ReportError(path, f"cannot write: {problem}") from None
    document = {
        "magic": MAGIC,
        "formatMajor": FORMAT_MAJOR,
        "formatMinor": FORMAT_MINOR,
        "reportId": str(debug.report_id),
        "contexts": contexts,
    }
    atomic_write(path, lambda file: cbor2.dump(document, file))


def read_debug(path: str | Path) -> DebugData:
    """Read a ``debug.cbor``; every problem with the file raises ``ReportError`` naming it."""
    path = Path(path)
    document, trailing = _decode(path, _read_file(path))
    try:
        return _to_debug_data(path, document, trailing)
    except _DocumentError as problem:
        raise ReportError(path, str(problem)) from None


def check_pair(
    profile_header: Header, debug: DebugData, debug_path: str | Path | None = None
) -> None:
    """Raise ``ReportError`` when ``debug`` was written for another report than the profile."""
    if profile_header.report_id != debug.report_id:
        raise ReportError(
            debug_path,
            f"debug.cbor does not belong to this profile.pop: report ids {debug.report_id!r} "
            f"(debug.cbor) and {profile_header.report_id!r} (profile.pop) differ",
        )


class _DocumentError(Exception):
    """What is wrong with a decoded document; becomes a ReportError with the path."""


def _read_file(path: Path) -> bytes:
    try:
        size = os.stat(path).st_size
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
        decoder = cbor2.CBORDecoder(
            stream,
            tag_hook=_refuse_unknown_tag,
            semantic_decoders=_SEMANTIC_DECODERS,
            max_depth=MAX_NESTING,
            allow_duplicate_keys=False,
            strict_hashable_types=True,
        )
        document = decoder.decode()
    except cbor2.CBORDecodeEOF as error:
        raise ReportError(path, f"truncated: {error}") from error
    except (cbor2.CBORError, ValueError, TypeError, OverflowError, LookupError) as error:
        refused = error if isinstance(error, _RefusedTagError) else error.__cause__
        reason = refused if isinstance(refused, _RefusedTagError) else error
        raise ReportError(path, f"not a valid debug.cbor: {reason}") from error
    except RecursionError as error:
        raise ReportError(path, "not a valid debug.cbor: nested too deeply") from error
    except MemoryError as error:
        raise ReportError(path, "not a valid debug.cbor: too large to decode") from error
    return document, len(data) - stream.tell()


def _to_debug_data(path: Path, document: Any, trailing: int) -> DebugData:
    if not isinstance(document, dict) or document.get("magic") != MAGIC:
        magic = document.get("magic") if isinstance(document, dict) else None
        raise _DocumentError(f"not a popvision-py debug.cbor (magic {str(magic)[:40]!r})")
    if trailing:
        raise _DocumentError(f"has {trailing} bytes after its CBOR map: not one debug.cbor")
    major, minor = document.get("formatMajor"), document.get("formatMinor")
    if not _is_int(major) or not _is_int(minor) or major < 1:
        raise _DocumentError(f"unknown debug format version {major!r}.{minor!r}")
    if major > FORMAT_MAJOR:
        raise FormatVersionError(
            path,
            f"written in debug format {major}.{minor}, but this popvision-py reads format "
            f"{FORMAT_MAJOR} (up to {FORMAT_MAJOR}.{FORMAT_MINOR}); update popvision-py",
        )
    report_id, contexts = document.get("reportId"), document.get("contexts")
    if not isinstance(report_id, str):
        raise _DocumentError(f"reportId must be a string, not {_type_name(report_id)}")
    if not isinstance(contexts, dict):
        raise _DocumentError(f"contexts must be a map, not {_type_name(contexts)}")
    _check_contexts(contexts)
    return DebugData(
        report_id=report_id,
        name=contexts["name"],
        parent=np.array(contexts["parent"], dtype=np.int32),
        layer=contexts["layer"],
        op=contexts["op"],
        api=contexts["api"],
        file=contexts["file"],
        line=np.array(contexts["line"], dtype=np.int32),
        args=contexts["args"],
    )


def _check_contexts(contexts: dict[str, Any]) -> None:
    missing = [name for name in COLUMNS if name not in contexts]
    if missing:
        raise _DocumentError(f"contexts lack the column(s) {', '.join(missing)}")
    for name in COLUMNS:
        if not isinstance(contexts[name], list):
            raise _DocumentError(
                f"contexts.{name} must be a list, not {_type_name(contexts[name])}"
            )
    count = len(contexts["name"])
    for name in COLUMNS:
        if len(contexts[name]) != count:
            raise _DocumentError(
                f"contexts.{name} has {len(contexts[name])} entries but contexts.name has "
                f"{count}: every column needs one entry per context"
            )
    for name in TEXT_COLUMNS:
        _check_all(contexts[name], name, lambda v: isinstance(v, str), "a string")
    for name in INT_COLUMNS:
        _check_all(contexts[name], name, _is_int32, "a 32-bit integer")
    _check_all(
        contexts["parent"], "parent", lambda v: -1 <= v < count, f"-1 or a context below {count}"
    )
    for index, args in enumerate(contexts["args"]):
        if not isinstance(args, dict):
            raise _DocumentError(f"contexts.args[{index}] must be a map, not {_type_name(args)}")
        problem = _json_problem(args, MAX_NESTING)
        if problem:
            raise _DocumentError(f"contexts.args[{index}]: {problem}")


def _check_all(values: list[Any], name: str, ok: Any, wanted: str) -> None:
    if all(ok(value) for value in values):
        return
    index = next(i for i, value in enumerate(values) if not ok(value))
    raise _DocumentError(f"contexts.{name}[{index}] is {values[index]!r:.60}, not {wanted}")


def _json_problem(value: Any, depth: int) -> str | None:
    """Why ``value`` is not JSON-like (None, bool, int, float, str, lists, str-keyed maps)."""
    if depth <= 0:
        return "nested too deeply"
    if value is None or isinstance(value, (bool, float, str)):
        return None
    if isinstance(value, int):
        # Wider integers would need CBOR's bignum tag, which readers refuse.
        return None if -(2**64) <= value < 2**64 else f"integer {value:.3g} is too large"
    if isinstance(value, list):
        return next(filter(None, (_json_problem(item, depth - 1) for item in value)), None)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"map key {key!r:.40} is not a string"
            problem = _json_problem(item, depth - 1)
            if problem:
                return problem
        return None
    return f"{_type_name(value)} is not a JSON-like value"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_int32(value: Any) -> bool:
    return _is_int(value) and _I32.min <= value <= _I32.max


def _type_name(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__
