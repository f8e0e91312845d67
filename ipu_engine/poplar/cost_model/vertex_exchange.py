"""The exchanges around a compute set, from the runs of one pool its vertices read (gathered
to the vertex's tile before the compute) or write (sent to the element's tile after it).

A tile receives an element once however many of its vertices read it, so each vertex
tile's runs are unioned first -- a broadcast operand's millions of one-element runs of a
few addresses become a few intervals -- and only the unions are cut where the tile mapping
changes. Where the cuts would be many more than the mapping's intervals the unions span
(a fine-grained mapping read whole), the intervals are counted instead of cut: how many
unions cover each interval, by a running sum. Either way the bytes per tile equal
``plan_exchange``'s on the runs cut by ``split_by_tile`` (the tests compare them).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.cost_model.exchange import ExchangePlan, _traffic
from ipu_engine.poplar.target import Target

#: pieces cut at a time (bounds the working arrays when the cuts are many)
_CHUNK_PIECES = 1 << 22
#: count covered mapping intervals instead of cutting once the cuts of whole intervals
#: are this many times the intervals the unions span
_COUNT_OVER = 2


@dataclass(frozen=True)
class TileUnions:
    """Disjoint intervals ``[start, end)`` of one pool's addresses per vertex tile, sorted
    by tile then address."""

    tile: np.ndarray  # int64
    start: np.ndarray  # int64
    end: np.ndarray  # int64

    @property
    def size(self) -> int:
        return int(self.tile.size)


def tile_unions(
    tile: np.ndarray, start: np.ndarray, length: np.ndarray, pool_size: int
) -> TileUnions:
    """The union of the runs ``[start, start + length)`` of each tile (runs in any order)."""
    keep = length > 0
    if not keep.all():
        tile, start, length = tile[keep], start[keep], length[keep]
    span = pool_size + 1  # a tile's ends stay below the next tile's first start
    if tile.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return TileUnions(z, z, z)
    tile = tile.astype(np.int64, copy=False)
    start = start.astype(np.int64, copy=False)
    if (int(tile.max()) + 1) * span >= 2**62:
        order = np.lexsort((start, tile))
        return _merged(tile[order], start[order], start[order] + length[order])
    key = tile * span + start
    if not bool((key[1:] >= key[:-1]).all()):
        # vertices come in tile order, so the keys are mostly sorted already: a stable
        # sort (timsort) finds the sorted stretches
        order = np.argsort(key, kind="stable")
        key, length = key[order], length[order]
    ends = key + length
    reach = np.maximum.accumulate(ends)
    first = np.flatnonzero(np.r_[True, key[1:] > reach[:-1]])
    m_start = key[first]
    m_end = reach[np.r_[first[1:] - 1, key.size - 1]]
    m_tile = m_start // span
    base = m_tile * span
    return TileUnions(m_tile, m_start - base, m_end - base)


def _merged(tile: np.ndarray, start: np.ndarray, end: np.ndarray) -> TileUnions:
    """``tile_unions`` of runs sorted by tile and start, a tile at a time (addresses too
    wide to share one key with the tile)."""
    bounds = np.flatnonzero(np.r_[True, tile[1:] != tile[:-1], True]).tolist()
    reach = np.empty_like(end)
    new = np.ones(tile.size, dtype=bool)
    for lo, hi in itertools.pairwise(bounds):
        reach[lo:hi] = np.maximum.accumulate(end[lo:hi])
        new[lo + 1 : hi] = start[lo + 1 : hi] > reach[lo : hi - 1]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, tile.size - 1]
    return TileUnions(tile[first], start[first], reach[last])


class ExchangeSums:
    """Bytes in and out per tile, on-IPU and cross-IPU, summed over pools."""

    def __init__(self, target: Target) -> None:
        self.num_tiles = target.num_tiles
        self.tiles_per_ipu = target.tiles_per_ipu
        self.one_ipu = target.num_ipus == 1
        n = self.num_tiles
        self.on_in, self.on_out = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.cross_in, self.cross_out = np.zeros(n, np.int64), np.zeros(n, np.int64)

    def plan(self) -> ExchangePlan:
        return ExchangePlan(
            _traffic(self.on_in, self.on_out), _traffic(self.cross_in, self.cross_out)
        )

    def add(self, into: np.ndarray, tiles: np.ndarray, elements: np.ndarray, size: int) -> None:
        """``into[tile] += elements * size`` for each row (tiles may repeat)."""
        if tiles.size:
            counts = np.bincount(tiles, weights=elements, minlength=self.num_tiles)
            into += np.rint(counts).astype(np.int64) * size

    def add_pairs(
        self, dst: np.ndarray, src: np.ndarray, elements: np.ndarray, elem_size: int
    ) -> None:
        """``elements`` moving from tile ``src`` to tile ``dst`` (one row each; rows whose
        tiles are the same stay where they are)."""
        remote = dst != src
        dst, src, elements = dst[remote], src[remote], elements[remote]
        if self.one_ipu:  # nothing crosses
            self.add(self.on_in, dst, elements, elem_size)
            self.add(self.on_out, src, elements, elem_size)
            return
        crossing = (dst // self.tiles_per_ipu) != (src // self.tiles_per_ipu)
        for mask, into_in, into_out in (
            (~crossing, self.on_in, self.on_out),
            (crossing, self.cross_in, self.cross_out),
        ):
            if mask.any():
                self.add(into_in, dst[mask], elements[mask], elem_size)
                self.add(into_out, src[mask], elements[mask], elem_size)


class PoolMapping:
    """One pool's tile mapping as intervals (the first address and tile of each, in
    address order; intervals never cross a variable), made once per compile."""

    def __init__(
        self,
        run_start: np.ndarray,
        run_tile: np.ndarray,
        size: int,
        run_var: np.ndarray,
        var_id: np.ndarray,
    ) -> None:
        self.run_start, self.run_tile, self.size = run_start, run_tile, size
        self.var_id = var_id  # graph-wide id of each of the pool's variables
        self._var = run_var  # the variable (its index in ``var_id``) of each interval
        self._next = np.empty(run_start.size, dtype=np.int64)  # each interval's end
        self._next[:-1] = run_start[1:]
        self._next[-1:] = size

    def run_end(self, run: np.ndarray) -> np.ndarray:
        return self._next[run]

    def runs_holding(self, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The intervals holding the first and the last address of ``[start, end)``."""
        # searched in the stretch of intervals the addresses lie in: a smaller haystack
        # stays in cache (a pool has millions)
        lo = int(np.searchsorted(self.run_start, start.min(), side="right")) - 1
        hi = int(np.searchsorted(self.run_start, end.max(), side="left"))
        stretch = self.run_start[lo : hi + 1]
        first = np.searchsorted(stretch, start, side="right") + (lo - 1)
        last = first.copy()
        # most runs end in the interval they start in: only the others are searched
        beyond = np.flatnonzero(end > self._next[first])
        last[beyond] = np.searchsorted(stretch, end[beyond] - 1, side="right") + (lo - 1)
        return first, last

    def variables(self, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        """The graph-wide ids, sorted, of the variables that intervals ``first`` to
        ``last`` (each pair and every one between) lie in."""
        n = self.var_id.size + 1
        marks = np.bincount(self._var[first], minlength=n)
        marks -= np.bincount(self._var[last] + 1, minlength=n)
        return self.var_id[np.cumsum(marks[:-1]) > 0]


def add_vertex_exchange(
    sums: ExchangeSums,
    mapping: PoolMapping,
    unions: TileUnions,
    elem_size: int,
    gather: bool,
) -> np.ndarray:
    """Add to ``sums`` the bytes that move for ``unions``: gathered to each union's tile
    from the elements' tiles (a read), or sent from it to them (a write). Returns the
    ids of the variables the unions lie in, sorted."""
    if unions.size == 0:
        return np.zeros(0, dtype=np.int64)
    first, last = mapping.runs_holding(unions.start, unions.end)
    touched = mapping.variables(first, last)
    inner = last - first - 1  # mapping intervals a union covers from end to end
    spans = inner > 0
    if spans.any():
        whole = int(inner[spans].sum())
        window = int(last[spans].max() - first[spans].min())
        if window > _COUNT_OVER * whole:
            _cut(sums, mapping, unions, first, last, elem_size, gather)
            return touched
    # the ends of each union are cut; the whole intervals between are counted
    head_end = np.minimum(unions.end, mapping.run_end(first))
    head = (unions.tile, mapping.run_tile[first], head_end - unions.start)
    two = last > first
    tail_start = mapping.run_start[last[two]]
    tail = (unions.tile[two], mapping.run_tile[last[two]], unions.end[two] - tail_start)
    for vertex_tile, element_tile, elements in (head, tail):
        _pairs(sums, vertex_tile, element_tile.astype(np.int64), elements, elem_size, gather)
    if spans.any():
        _Covered(sums, mapping, unions.tile[spans], first[spans] + 1, last[spans]).add(
            elem_size, gather
        )
    return touched


def _pairs(
    sums: ExchangeSums,
    vertex_tile: np.ndarray,
    element_tile: np.ndarray,
    elements: np.ndarray,
    elem_size: int,
    gather: bool,
) -> None:
    if gather:
        sums.add_pairs(vertex_tile, element_tile, elements, elem_size)
    else:
        sums.add_pairs(element_tile, vertex_tile, elements, elem_size)


def _cut(
    sums: ExchangeSums,
    mapping: PoolMapping,
    unions: TileUnions,
    first: np.ndarray,
    last: np.ndarray,
    elem_size: int,
    gather: bool,
) -> None:
    """Each union cut at the mapping, a chunk of unions at a time."""
    count = last - first + 1
    ends = np.cumsum(count)
    lo = 0
    while lo < count.size:
        done = int(ends[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(ends, done + _CHUNK_PIECES, side="right")), lo + 1)
        c = count[lo:hi]
        source = np.repeat(np.arange(lo, hi), c)
        run = first[source] + np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        p_start = np.maximum(unions.start[source], mapping.run_start[run])
        p_end = np.minimum(unions.end[source], mapping.run_end(run))
        element_tile = mapping.run_tile[run].astype(np.int64)
        _pairs(sums, unions.tile[source], element_tile, p_end - p_start, elem_size, gather)
        lo = hi


class _Covered:
    """Mapping intervals covered whole by unions: the union of ``tile`` covers intervals
    ``[begin, stop)`` (indices; a tile's unions in address order). Counted per interval
    -- how many unions cover it, of its own IPU, of its own tile (none or one: a tile's
    unions are disjoint) -- and per union -- its elements, those on its own IPU."""

    def __init__(
        self,
        sums: ExchangeSums,
        mapping: PoolMapping,
        tile: np.ndarray,
        begin: np.ndarray,
        stop: np.ndarray,
    ) -> None:
        self.sums, self.tile = sums, tile
        lo = int(begin.min())
        width = int(stop.max()) - lo
        b, s = begin - lo, stop - lo
        cover = _cover(b, s, width)
        at = np.flatnonzero(cover)  # window positions of the covered intervals
        run = at + lo
        self.run_tile = mapping.run_tile[run].astype(np.int64)
        self.length = mapping.run_end(run) - mapping.run_start[run]
        self.every = cover[at]
        # a union of the interval's own tile covering it: found by (tile, first index)
        runs = mapping.run_start.size + 1
        key = tile * runs + begin
        j = np.searchsorted(key, self.run_tile * runs + run, side="right") - 1
        self.local = (j >= 0) & (tile[j] == self.run_tile) & (stop[j] > run)
        # each union's elements: the mapping's intervals are contiguous
        self.total = mapping.run_start[stop] - mapping.run_start[begin]  # stop < last run
        if sums.one_ipu:
            self.same, self.same_cover = self.total, self.every
            return
        per = sums.tiles_per_ipu
        ipu, run_ipu = tile // per, self.run_tile // per
        self.same = np.zeros(tile.size, dtype=np.int64)
        self.same_cover = np.zeros(at.size, dtype=np.int64)
        p0, p1 = np.searchsorted(at, b), np.searchsorted(at, s)
        for i in np.unique(ipu).tolist():
            mine, theirs = ipu == i, run_ipu == i
            self.same_cover[theirs] = _cover(b[mine], s[mine], width)[at[theirs]]
            on_i = np.r_[0, np.cumsum(np.where(theirs, self.length, 0))]
            self.same[mine] = on_i[p1[mine]] - on_i[p0[mine]]

    def add(self, elem_size: int, gather: bool) -> None:
        sums, add = self.sums, self.sums.add
        own_on, own_cross = (sums.on_in, sums.cross_in) if gather else (sums.on_out, sums.cross_out)
        far_on, far_cross = (sums.on_out, sums.cross_out) if gather else (sums.on_in, sums.cross_in)
        # the union's tile takes (or gives) every element of its intervals but its own
        add(own_on, self.tile, self.same, elem_size)
        add(own_on, self.run_tile, -self.length * self.local, elem_size)
        add(own_cross, self.tile, self.total - self.same, elem_size)
        # an interval's tile gives (or takes) its elements once per covering union of
        # another tile
        add(far_on, self.run_tile, self.length * (self.same_cover - self.local), elem_size)
        add(far_cross, self.run_tile, self.length * (self.every - self.same_cover), elem_size)


def _cover(begin: np.ndarray, stop: np.ndarray, width: int) -> np.ndarray:
    """How many ranges ``[begin, stop)`` cover each of ``width`` positions."""
    n = width + 1
    marks = np.bincount(begin, minlength=n) - np.bincount(stop, minlength=n)
    return np.cumsum(marks[:width])
