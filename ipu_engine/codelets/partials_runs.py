"""A partials-major reduce's inputs read partial by partial straight from memory.

``reduce_partials`` gives each vertex its outputs' first partials, then their second, ...
as runs of one partials tensor: the runs of partial p are those of partial 0 moved by p
times one distance. Then every output's partial p is at ``address of its first partial +
p * distance``, and a compute set reads one partial at a time of every output at once,
rather than gathering all partials of all outputs (one address per element) and picking
them out of the gathered copy.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.runs import expand
from ipu_engine.poplar.vertex import VertexBatch


@dataclass(frozen=True)
class ShiftedPartials:
    """Where every output's partials are: its first, and the distance to the next."""

    start: np.ndarray  # runs of the outputs' first partials, in output order
    length: np.ndarray
    shift: int  # elements from one partial of an output to its next
    depth: int  # partials per output (the same for every vertex)

    def first_addresses(self) -> np.ndarray:
        return expand(self.start, self.length)

    @functools.cached_property
    def span(self) -> tuple[int, int] | None:
        """[first, last + 1) addresses of the first partials when they are at most twice as
        many as the outputs (so each partial is read as one slice of memory, every output
        picked from their sum) and the partials lie after one another; else None."""
        if self.shift <= 0 or self.start.size == 0:
            return None
        lo, hi = int(self.start.min()), int((self.start + self.length).max())
        return (lo, hi) if hi - lo <= 2 * int(self.length.sum()) else None


def shifted_partials(batch: VertexBatch) -> ShiftedPartials | None:
    """The batch's ``in`` edges as shifted partials, found once per compiled compute set;
    None unless every vertex has the same number of partials, laid out so."""
    if "shifted_partials" not in batch.cache:
        batch.cache["shifted_partials"] = _find(batch)
    return batch.cache["shifted_partials"]


def _find(batch: VertexBatch) -> ShiftedPartials | None:
    runs = batch.edge_runs("in")
    depths = batch.state("numPartials").astype(np.int64)
    if runs is None or batch.count == 0 or not (depths == depths[0]).all() or depths[0] < 1:
        return None
    depth = int(depths[0])
    if not np.array_equal(batch.sizes("in"), batch.sizes("out") * depth):
        return None
    start, length, run_offsets = runs
    counts = np.diff(run_offsets)
    if (counts % depth).any():
        return None
    vertex = np.repeat(np.arange(batch.count), counts)
    per_partial = (counts // depth)[vertex]
    chunk, local = np.divmod(np.arange(start.size) - run_offsets[:-1][vertex], per_partial)
    first_run = run_offsets[:-1][vertex] + local  # the same run of the first partial
    if not np.array_equal(length, length[first_run]):
        return None
    moved = start - start[first_run]
    later = np.flatnonzero(chunk > 0)
    shift = int(moved[later[0]] // chunk[later[0]]) if later.size else 0
    if not np.array_equal(moved, chunk * shift):
        return None
    first = chunk == 0
    return ShiftedPartials(start[first], length[first], shift, depth)


@dataclass(frozen=True)
class OutputSpan:
    """Outputs that are their first partials' span moved elsewhere in memory: each
    output's address minus its first partial's is one distance, and the first partials
    fill their span. The sums over the span are then the outputs, in address order."""

    first: int  # address of the output of the span's first element
    scale: np.ndarray | None  # each output's scale in address order; None: all 1


def output_span(batch: VertexBatch, shifted: ShiftedPartials) -> OutputSpan | None:
    """The batch's outputs as an ``OutputSpan``, found once per compiled compute set;
    None when they are laid out otherwise (or not kept as runs)."""
    if "output_span" not in batch.cache:
        batch.cache["output_span"] = _find_span(batch, shifted)
    return batch.cache["output_span"]


def _find_span(batch: VertexBatch, shifted: ShiftedPartials) -> OutputSpan | None:
    runs = batch.edge_runs("out")
    span = shifted.span
    if runs is None or span is None:
        return None
    first = shifted.first_addresses()
    if span[1] - span[0] != first.size:  # gaps in the span: not every element an output
        return None
    out = expand(runs[0], runs[1])
    if out.size != first.size or not np.array_equal(
        out - first, np.full_like(out, out[0] - first[0])
    ):
        return None
    scale = np.repeat(batch.state("scale"), batch.sizes("out"))
    by_address = None
    if np.any(scale != 1):
        by_address = np.empty_like(scale)
        by_address[first - span[0]] = scale
    return OutputSpan(int(out[0] - first[0]) + span[0], by_address)
