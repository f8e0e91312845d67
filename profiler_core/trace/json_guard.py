"""Load untrusted JSON with bounded memory and recursion: a size limit and a nesting pre-scan.

Python's ``json`` recurses once per ``[`` or ``{``, so a file of a billion ``[`` would
exhaust the stack or memory before failing. The pre-scan measures the deepest nesting
outside strings in fixed-size numpy chunks (no Python loop per byte) and refuses the file
before ``json.loads`` ever sees it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.files import regular_file_size

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_DEPTH = 200
_CHUNK = 1 << 20

# Byte classes for the pre-scan: 0 other, 1 quote, 2 opener, 3 closer, 4 backslash.
_CLASS = np.zeros(256, np.uint8)
_CLASS[ord('"')] = 1
_CLASS[[ord("["), ord("{")]] = 2
_CLASS[[ord("]"), ord("}")]] = 3
_CLASS[ord("\\")] = 4


def max_nesting(data: bytes, stop_above: int | None = None) -> int:
    """The deepest ``[``/``{`` nesting of ``data`` outside JSON strings.

    Stops early (returning a value > ``stop_above``) once that depth is passed.
    """
    in_string = 0  # 1 while inside a string at a chunk boundary
    backslashes = 0  # length of the backslash run ending the previous chunk
    depth = 0
    deepest = 0
    for offset in range(0, len(data), _CHUNK):
        b = np.frombuffer(data, np.uint8, count=min(_CHUNK, len(data) - offset), offset=offset)
        code = _CLASS[b]
        if backslashes or (code == 4).any():
            code, backslashes = drop_escaped_quotes(code, backslashes)
        keep = code[(code >= 1) & (code <= 3)]
        quote = (keep == 1).astype(np.int64)
        # A bracket is inside a string when an odd number of real quotes precede it.
        outside = (np.cumsum(quote) - quote + in_string) % 2 == 0
        step = ((keep == 2).astype(np.int64) - (keep == 3)) * outside
        if len(step):
            levels = depth + np.cumsum(step)
            deepest = max(deepest, int(levels.max()))
            depth = int(levels[-1])
        in_string = (int(quote.sum()) + in_string) % 2
        if stop_above is not None and deepest > stop_above:
            break
    return deepest


def drop_escaped_quotes(code: np.ndarray, carried: int) -> tuple[np.ndarray, int]:
    """``code`` with quotes preceded by an odd backslash run cleared, and the trailing run.

    Works on the positions of backslashes only, which are rare in traces.
    """
    bs = np.flatnonzero(code == 4)
    if not len(bs):
        if carried % 2 and code[0] == 1:
            code = code.copy()
            code[0] = 0
        return code, 0
    new_run = np.ones(len(bs), bool)
    new_run[1:] = bs[1:] != bs[:-1] + 1
    starts = bs[new_run]
    ends = np.append(bs[np.flatnonzero(new_run)[1:] - 1], bs[-1])
    lengths = ends - starts + 1 + np.where(starts == 0, carried, 0)
    if carried and starts[0] != 0:  # the carried run ends right before index 0
        starts, ends = np.append(-carried, starts), np.append(-1, ends)
        lengths = np.append(carried, lengths)
    escaped_at = ends[lengths % 2 == 1] + 1
    escaped_at = escaped_at[escaped_at < len(code)]
    code = code.copy()
    code[escaped_at[code[escaped_at] == 1]] = 0
    trailing = int(lengths[-1]) if ends[-1] == len(code) - 1 else 0
    return code, trailing


def load_json_file(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """The JSON value in ``path``, or ReportError if too big, too deep or malformed."""
    path = Path(path)
    try:
        size = regular_file_size(path)  # never opens a FIFO or device
        if size > max_bytes:
            raise ReportError(
                path,
                f"{size / 2**20:.1f} MiB is over the {max_bytes / 2**20:.0f} MiB limit for "
                "JSON traces (pass a larger max_bytes to open it anyway)",
            )
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)  # the file may have grown since stat()
    except OSError as exc:
        raise ReportError(path, f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise ReportError(path, f"grew past the {max_bytes / 2**20:.0f} MiB limit while read")
    if not data.strip():
        raise ReportError(path, "empty file: not a JSON trace")
    return load_json_text(data, path, "", max_depth=max_depth)


def load_json_text(
    text: str | bytes, path: str | Path | None, what: str, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> Any:
    """The JSON value of ``text`` (``what`` of the file ``path``, e.g. "event 7's arguments";
    "" for the whole file), or ReportError naming both when it is malformed or nested deeper
    than ``max_depth`` (measured before ``json.loads`` recurses into it)."""
    where = f"{what}: " if what else ""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if max_nesting(data, stop_above=max_depth) > max_depth:
        kind = "" if what else ": not a trace"
        raise ReportError(
            path, f"{where}JSON nested deeper than {max_depth} levels{kind} (refused unread)"
        )
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise ReportError(path, f"{where}not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ReportError(
            path, f"{where}malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise ReportError(path, f"{where}JSON nested too deeply to parse") from None
