"""What a tensor's index key and shape mean before any address is touched: row-major
strides, whether a key is basic indexing (a view) and how a key reads in a view's name."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= int(n)
    return tuple(reversed(strides))


def is_basic(key: object) -> bool:
    """Whether ``key`` is basic indexing (ints, slices, None, ...): a view, no gather."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(
        isinstance(p, slice | int | np.integer) or p is None or p is Ellipsis
        for p in parts
        if not isinstance(p, bool)
    ) and not any(isinstance(p, bool) for p in parts)


def with_ellipsis(key: object) -> tuple:
    """``key`` ending in ``...`` so that indexing every dimension gives a 0-d view, not a
    scalar read from memory."""
    parts = key if isinstance(key, tuple) else (key,)
    return parts if Ellipsis in parts else (*parts, Ellipsis)


def key_text(key: object) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for p in parts:
        if isinstance(p, slice):
            out.append(f"{'' if p.start is None else p.start}:{'' if p.stop is None else p.stop}")
        else:
            out.append(str(p))
    return ",".join(out)
