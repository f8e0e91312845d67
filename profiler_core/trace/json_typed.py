"""A chunk of Chrome trace events decoded by msgspec straight into typed records: no dict
per event, only the fields the common events need, and ``args`` kept as its raw JSON bytes.

msgspec decodes a chunk in C into ``TraceEvent`` structs (unknown keys skipped, a key
given twice read as its last value, as ``json.loads`` does). A chunk it would read
otherwise than ``json.loads`` is refused (None) and read as dicts: a field of another
type than declared here (a bool pid, a null tid, a float id, a number as a name), NaN or
Infinity, a number past float's range, an escaped lone surrogate, an integer of more than
640 digits (Python may refuse to make it an int), and text that is not UTF-8 (msgspec does
not check the UTF-8 of a value it skips or keeps raw, so the chunk is checked first, as
``json.loads`` decodes bytes: UTF-8 with surrogates passed). Without msgspec installed
every chunk is read as dicts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.trace.json_parse import loads

try:
    import msgspec
except ImportError:  # every chunk is read as dicts (json_parse.loads), a little slower
    msgspec = None

#: a field the event does not have (msgspec's UNSET where msgspec is installed)
MISSING: Any = msgspec.UNSET if msgspec is not None else object()

if msgspec is not None:
    _Unset = msgspec.UnsetType

    class TraceEvent(msgspec.Struct, gc=False):
        """The fields of one event that the common events' columns are made of. ``args``
        and ``bind_id`` are their JSON text as written (empty when absent); untracked by
        the cyclic collector (``gc=False``): they hold no containers."""

        ph: str | _Unset = MISSING
        name: str = ""
        cat: str = ""
        ts: int | float | str | _Unset = MISSING
        dur: int | float | str | _Unset = MISSING
        pid: int | str = 0
        tid: int | str | _Unset = MISSING
        id: int | str | _Unset = MISSING
        bp: str | _Unset = MISSING
        s: str | _Unset = MISSING
        args: msgspec.Raw = msgspec.Raw()
        bind_id: msgspec.Raw = msgspec.Raw()

    _DECODER: Any = msgspec.json.Decoder(list[TraceEvent])
    _REFUSED: tuple[type[BaseException], ...] = (msgspec.MsgspecError, ValueError, RecursionError)
else:  # pragma: no cover - msgspec is a dependency; this keeps the dict path working
    TraceEvent = None
    _DECODER = None
    _REFUSED = ()


#: digits kept, everything else a space (bytes.translate): a run of this many digits is an
#: integer literal Python may refuse to make an int (sys.get_int_max_str_digits(), 4300 by
#: default, checked from 640), so json.loads refuses its event; msgspec would keep it in a
#: raw args or skip it in an unknown key, so such a chunk is read as dicts
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_TOO_LONG = b"0" * 641


class TypedEvents(list):
    """A chunk's events as ``TraceEvent`` structs, in file order, with the chunk's text to
    read any of them again as the dicts ``json.loads`` makes (events of other phases)."""

    def __init__(self, events: list, text: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        super().__init__(events)
        self.text, self.starts, self.ends = text, starts, ends

    def dicts(self, a: int, b: int) -> list[Any]:
        """Events ``a`` to ``b`` (exclusive) as dicts: the text msgspec read, so valid."""
        return loads(b"[" + self.text[int(self.starts[a]) : int(self.ends[b - 1])] + b"]")


def decode(text: bytes) -> list | None:
    """The objects of the JSON array ``text`` as ``TraceEvent`` structs; None when msgspec
    is missing or would read ``text`` otherwise than ``json.loads`` (see the module)."""
    if _DECODER is None:
        return None
    if _TOO_LONG in text.translate(_DIGITS):  # json.loads refuses such an int: see _TOO_LONG
        return None
    if not text.isascii():
        try:
            text.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
    try:
        return _DECODER.decode(text)
    except _REFUSED:
        return None
