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
