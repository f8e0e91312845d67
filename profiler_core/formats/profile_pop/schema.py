"""The ``profile.pop`` Cap'n Proto schema, loaded once, and the file's fixed constants."""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType

import capnp

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "profile.capnp"
MAGIC = "popvision-py profile"

# Our deepest path is Profile > Execution > List(Run) > Run > Array > List(UInt64); a file
# nesting deeper than this is hostile, and refusing it keeps capnp's recursion shallow.
NESTING_LIMIT = 16

# Exceptions that reading a damaged message can raise from pycapnp or numpy. The reader turns
# every one of them into a ReportError naming the file and the section.
DECODE_ERRORS: tuple[type[BaseException], ...] = (
    capnp.KjException,
    ValueError,  # includes UnicodeDecodeError
    TypeError,
    OverflowError,
    IndexError,
    KeyError,
    MemoryError,
    RecursionError,
)


@functools.cache
def profile_schema() -> ModuleType:
    """The loaded schema module: ``profile_schema().Profile`` is the root struct."""
    return capnp.load(str(SCHEMA_FILE), imports=[])


def traversal_limit_words(file_size: int) -> int:
    """How many 8-byte words capnp may visit in a message of ``file_size`` bytes.

    Reading every section once visits each word about once; four times that leaves room for
    the reader's own repeated struct lookups yet still stops a hostile file whose pointers
    alias one region many times from making us walk (or allocate) without bound.
    """
    return 4 * (file_size // 8) + 4096


def describe(error: BaseException) -> str:
    """One readable line for an exception from pycapnp (whose messages carry C++ stacks)."""
    if isinstance(error, capnp.KjException):
        text = str(getattr(error, "description", "") or error)
        # "expected boundsCheck(...); Message contained out-of-bounds ..." -> the sentence.
        if text.startswith("expected ") and "; " in text:
            text = text.split("; ", 1)[1].split(" This usually indicates", 1)[0]
        text = f"damaged Cap'n Proto data: {text}"
    elif isinstance(error, MemoryError):
        text = "not enough memory to decode it"
    elif isinstance(error, RecursionError):
        text = "nested too deeply"
    else:
        text = str(error) or type(error).__name__
    first_line = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return first_line[:300]
