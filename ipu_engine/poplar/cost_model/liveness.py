"""Liveness: which variables are always live, and when the others are.

A variable is *always live* when its value must survive the whole program: constants,
variables the host reads or writes, variables read before they are written (their
value comes from an earlier run), variables used by several engine programs or by a
function called from several places, and variables nothing uses. Every other variable
is *not always live*: live from its first access to its last, in program-step order;
a live range that enters a loop, or is read in a loop before being written, covers the
whole loop. Not-always-live variables whose ranges do not overlap share memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.compiler.steps import Step


@dataclass(frozen=True)
class Liveness:
    always_live: np.ndarray  # bool per variable
    first: np.ndarray  # int64 per variable: first step of its range (-1 if always live)
    last: np.ndarray  # int64 per variable: last step, inclusive


def analyse_liveness(
    num_variables: int,
    steps: Sequence[Step],
    is_constant: np.ndarray,
    host_variables: np.ndarray,
    loop_spans: Sequence[tuple[int, int]],
    program_spans: Sequence[tuple[int, int]],
    shared_spans: Sequence[tuple[int, int]],
) -> Liveness:
    """``program_spans``: each engine program's step range; ``shared_spans``: step ranges
    of functions called from more than one place."""
    access_var, access_step, access_write = _accesses(steps)
    n = num_variables
    always = is_constant.copy()
    always[host_variables] = True
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(n, -1, dtype=np.int64)
    np.minimum.at(first, access_var, access_step)
    np.maximum.at(last, access_var, access_step)
    always |= last < 0  # never used
    # read before written: the value lives on from an earlier run
    first_write = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    writes = access_write
    np.minimum.at(first_write, access_var[writes], access_step[writes])
    first_read = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_read, access_var[~writes], access_step[~writes])
    always |= first_read <= first_write
    always |= _touched_in_several(access_var, access_step, program_spans, n)
    for begin, end in shared_spans:
        inside = (access_step >= begin) & (access_step <= end)
        always[access_var[inside]] = True
    first, last = _extend_over_loops(first, last, first_read, first_write, loop_spans)
    first = np.where(always, -1, first)
    last = np.where(always, -1, last)
    return Liveness(always, first, last)


def _accesses(steps: Sequence[Step]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    vars_, step_ids, writes = [], [], []
    for step in steps:
        for key, is_write in (("reads", False), ("writes", True)):
            ids = step.facts.get(key)
            if ids is not None and len(ids):
                vars_.append(np.asarray(ids, dtype=np.int64))
                step_ids.append(np.full(len(ids), step.id, dtype=np.int64))
                writes.append(np.full(len(ids), is_write))
    if not vars_:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=bool)
    return np.concatenate(vars_), np.concatenate(step_ids), np.concatenate(writes)


def _touched_in_several(
    access_var: np.ndarray, access_step: np.ndarray, spans: Sequence[tuple[int, int]], n: int
) -> np.ndarray:
    seen = np.zeros(n, dtype=np.int64)
    for begin, end in spans:
        inside = np.zeros(n, dtype=bool)
        mask = (access_step >= begin) & (access_step <= end)
        inside[access_var[mask]] = True
        seen += inside
    return seen > 1


def _extend_over_loops(
    first: np.ndarray,
    last: np.ndarray,
    first_read: np.ndarray,
    first_write: np.ndarray,
    loop_spans: Sequence[tuple[int, int]],
) -> tuple[np.ndarray, np.ndarray]:
    first, last = first.copy(), last.copy()
    # inner loops are recorded before the loops that contain them; two passes settle nesting
    for _ in range(2):
        for begin, end in loop_spans:
            overlaps = (first <= end) & (last >= begin)
            inside = (first >= begin) & (last <= end)
            # read in the loop before written in it: carried from one iteration to the next
            carried = (
                inside & (first_read >= begin) & (first_read <= end) & (first_read <= first_write)
            )
            cover = overlaps & (~inside | carried)
            first[cover] = np.minimum(first[cover], begin)
            last[cover] = np.maximum(last[cover], end)
    return first, last


def live_bytes_per_step(liveness: Liveness, var_bytes: np.ndarray, num_steps: int) -> np.ndarray:
    """Not-always-live bytes live during each step."""
    nal = ~liveness.always_live
    delta = np.zeros(num_steps + 1, dtype=np.int64)
    np.add.at(delta, liveness.first[nal], var_bytes[nal])
    np.add.at(delta, liveness.last[nal] + 1, -var_bytes[nal])
    return np.cumsum(delta)[:num_steps]


def peak_per_tile(
    liveness: Liveness,
    region_var: np.ndarray,
    region_tile: np.ndarray,
    region_bytes: np.ndarray,
    num_tiles: int,
) -> np.ndarray:
    """Per tile, the most not-always-live bytes live at once (their shared area)."""
    nal = ~liveness.always_live[region_var]
    var, tile, size = region_var[nal], region_tile[nal].astype(np.int64), region_bytes[nal]
    if var.size == 0:
        return np.zeros(num_tiles, dtype=np.int64)
    start, end = liveness.first[var], liveness.last[var] + 1
    # events sorted by tile, then step, ends before starts at the same step: one int64 key
    # per event and a stable sort (the order lexsort gives) -- a few arrays of the events,
    # not one per sort key, for the millions of regions a large model has
    steps = int(end.max()) + 1
    key = np.concatenate([(tile * steps + start) * 2 + 1, (tile * steps + end) * 2])
    del start, end
    order = np.argsort(key, kind="stable")
    del key
    running = np.concatenate([size, -size])[order]
    np.cumsum(running, out=running)  # each tile's events sum to zero
    tiles_sorted = np.concatenate([tile, tile])[order]
    del order
    first = np.flatnonzero(np.r_[True, tiles_sorted[1:] != tiles_sorted[:-1]])
    peak = np.zeros(num_tiles, dtype=np.int64)
    peak[tiles_sorted[first]] = np.maximum(np.maximum.reduceat(running, first), 0)
    return peak
