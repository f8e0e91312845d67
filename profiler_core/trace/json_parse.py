"""``json.loads`` of a chunk of events, by a native parser where it gives the same values.

orjson (~1.6x faster than the standard library on a Kineto trace, measured in
``benchmarks/bench_chrome_import.py``) parses a chunk unless it would read it otherwise
than ``json.loads``: it refuses NaN and lone surrogates (the standard library then reads
them) and reads an integer of 20 digits or more as a float (such a chunk is left to the
standard library, which keeps every digit). Without orjson installed, every chunk is read
by the standard library.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # the standard library alone reads every trace, a little slower
    orjson = None


#: digits kept, everything else a space: an integer orjson would read as a float shows as
#: 20 zeros in a row (bytes.translate and a substring search, both C loops)
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_INTEGER = b"0" * 20


def loads(text: bytes) -> Any:
    """``json.loads(text)``, by orjson when it reads the text (the same values)."""
    if orjson is not None and _LONG_INTEGER not in text.translate(_DIGITS):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
