"""How many generated cases the property-based tests run: a small, deterministic number
in ``make test``, ``POPVISION_FUZZ_EXAMPLES`` of them (random seeds) in ``make fuzz``."""

from __future__ import annotations

import os

#: Cases per property in ``make fuzz`` (0: the suite's own small numbers).
FUZZ_EXAMPLES = int(os.environ.get("POPVISION_FUZZ_EXAMPLES", "0") or 0)


def examples(small: int) -> int:
    """``small`` in ``make test``; the fuzz run's number under ``make fuzz``."""
    return FUZZ_EXAMPLES or small


#: ``make test`` derandomizes (the same cases every run); ``make fuzz`` explores.
DERANDOMIZE = FUZZ_EXAMPLES == 0


def byte_edits():  # -> a hypothesis strategy
    """Up to five edits of a file's bytes: (where, noise, insert rather than overwrite)."""
    from hypothesis import strategies as st

    return st.lists(
        st.tuples(st.integers(0, 2**31), st.binary(min_size=0, max_size=12), st.booleans()),
        min_size=1,
        max_size=5,
    )


def edited(data: bytes, edits: list[tuple[int, bytes, bool]]) -> bytes:
    """``data`` with ``edits`` (from ``byte_edits``) applied in order."""
    out = bytearray(data)
    for where, noise, insert in edits:
        at = where % (len(out) + 1)
        if insert:
            out[at:at] = noise
        else:
            out[at : at + max(len(noise), 1)] = noise
    return bytes(out)
