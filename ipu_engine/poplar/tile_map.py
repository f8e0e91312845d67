"""A pool's tile mapping as intervals, kept per variable (Poplar maps regions, not elements).

Each variable holds sorted intervals ``[start, next start)`` of its flat elements with one
tile each (-1 while unmapped), adjacent intervals on the same tile joined; starts are int32
within a variable (int64 only for a variable of 2**31 elements or more): ResNet-50's
activations alone map to ten million intervals. Mapping a tensor paints runs of addresses;
reading gives tiles per element only to callers that ask for elements.
"""

from __future__ import annotations

import itertools

import numpy as np

from ipu_engine.poplar.arrays import search_many

UNMAPPED = -1

_EMPTY64 = np.zeros(0, dtype=np.int64)
_EMPTY32 = np.zeros(0, dtype=np.int32)


def index_dtype(n: int) -> type[np.signedinteger]:
    """The narrowest of int32 / int64 that holds every index up to ``n``."""
    return np.int32 if n < 2**31 else np.int64


class TileMap:
    """The tile of every element of one pool, as per-variable intervals."""

    def __init__(self) -> None:
        self.size = 0
        self._bases: list[int] = []
        self._starts: list[np.ndarray] = []  # per variable: first flat element (index_dtype)
        self._tiles: list[np.ndarray] = []  # per variable: int32 tile of each interval
        self._joined: tuple[np.ndarray, np.ndarray] | None = None
        # where each variable's intervals start in ``_joined`` (as joined), and the first
        # variable changed since: a join after mapping new variables copies the others'
        # joined intervals instead of visiting every variable again (quadratic over ops)
        self._joined_offsets = np.zeros(1, dtype=np.int64)
        self._joined_buffers = (_EMPTY64, _EMPTY32)  # ``_joined`` are their first entries
        self._changed_from = 0
        # the bases as int64, grown by doubling: rebuilding it from the list after every
        # add_variable made add/map loops over 400k variables quadratic (minutes)
        self._bases_buffer = np.empty(0, dtype=np.int64)
        self._bases_filled = 0  # how many of the buffer's first entries are bases
        # every variable's starts and tiles in two arrays, each variable's a view of them,
        # as ``variable_intervals`` packed them (None once any variable changes since): the
        # report's regions share them instead of copying the mapping
        self._packed: tuple[np.ndarray, np.ndarray] | None = None

    # -- growing ----------------------------------------------------------------------
    def add_variable(self, n: int) -> int:
        """Room for a variable of ``n`` elements, unmapped; returns its first address."""
        base = self.size
        self._bases.append(base)
        if n:
            self._starts.append(np.zeros(1, dtype=index_dtype(n)))
            self._tiles.append(np.full(1, UNMAPPED, dtype=np.int32))
        else:
            self._starts.append(_EMPTY64)
            self._tiles.append(_EMPTY32)
        self.size = base + n
        self._changed(len(self._bases) - 1)
        return base

    def _changed(self, k: int) -> None:
        """Variable ``k``'s intervals changed (or it is new): the join is stale from it on."""
        self._changed_from = min(self._changed_from, k)
        self._packed = None

    def _var_size(self, k: int) -> int:
        end = self._bases[k + 1] if k + 1 < len(self._bases) else self.size
        return end - self._bases[k]

    def _bases_np(self) -> np.ndarray:
        n, filled = len(self._bases), self._bases_filled
        if filled < n:
            if self._bases_buffer.size < n:
                grown = np.empty(max(n, 2 * self._bases_buffer.size, 64), dtype=np.int64)
                grown[:filled] = self._bases_buffer[:filled]
                self._bases_buffer = grown
            self._bases_buffer[filled:n] = self._bases[filled:n]
            self._bases_filled = n
        return self._bases_buffer[:n]

    # -- mapping ----------------------------------------------------------------------
    def paint(self, start: np.ndarray, length: np.ndarray, tile: np.ndarray | int) -> None:
        """Map runs ``[start, start + length)`` of addresses to ``tile`` (one per run);
        where runs overlap, the later run wins, as in numpy assignment."""
        start = np.asarray(start, dtype=np.int64).reshape(-1)
        length = np.asarray(length, dtype=np.int64).reshape(-1)
        tile = np.broadcast_to(np.asarray(tile, dtype=np.int32), start.shape)
        keep = length > 0
        if not keep.any():
            return
        start, length, tile = start[keep], length[keep], tile[keep]
        bases = self._bases_np()
        # cut runs at variable boundaries: each piece lies in one variable
        first = np.searchsorted(bases, start, side="right") - 1
        last = np.searchsorted(bases, start + length - 1, side="right") - 1
        if (first != last).any():
            count = last - first + 1
            src = np.repeat(np.arange(start.size), count)
            var = (
                first[src]
                + np.arange(int(count.sum()))
                - np.repeat(np.cumsum(count) - count, count)
            )
            ends = np.append(bases[1:], self.size)
            p_start = np.maximum(start[src], bases[var])
            p_end = np.minimum(start[src] + length[src], ends[var])
            start, length, tile, first = p_start, p_end - p_start, tile[src], var
        order = np.argsort(first, kind="stable")
        start, length, tile, first = start[order], length[order], tile[order], first[order]
        bounds = np.flatnonzero(np.r_[True, first[1:] != first[:-1], True])
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            k = int(first[lo])
            self._paint_variable(k, start[lo:hi] - bases[k], length[lo:hi], tile[lo:hi])
            self._changed(k)

    def paint_elements(self, index: np.ndarray | slice, tiles: np.ndarray | int) -> None:
        """Map the elements at ``index`` (addresses, or a slice of the pool) to ``tiles``
        (one per element, or one for all)."""
        if isinstance(index, slice):
            begin, end, _ = index.indices(self.size)
            if np.ndim(tiles) == 0:
                self.paint(np.array([begin]), np.array([end - begin]), int(tiles))
                return
            addr_first, count = begin, end - begin
            tiles = np.asarray(tiles).reshape(-1)
            if tiles.size == 0:
                return
            cuts = np.concatenate(([0], np.flatnonzero(tiles[1:] != tiles[:-1]) + 1))
            lengths = np.diff(np.append(cuts, count))
            self.paint(addr_first + cuts, lengths, tiles[cuts])
            return
        addr = np.asarray(index, dtype=np.int64).reshape(-1)
        if addr.size == 0:
            return
        tiles = np.broadcast_to(np.asarray(tiles, dtype=np.int32).reshape(-1), addr.shape)
        breaks = (np.diff(addr) != 1) | (tiles[1:] != tiles[:-1])
        cuts = np.concatenate(([0], np.flatnonzero(breaks) + 1))
        lengths = np.diff(np.append(cuts, addr.size))
        self.paint(addr[cuts], lengths, tiles[cuts])

    def _paint_variable(
        self, k: int, start: np.ndarray, length: np.ndarray, tile: np.ndarray
    ) -> None:
        n = self._var_size(k)
        order = np.argsort(start, kind="stable")
        s, e, t = start[order], (start + length)[order], tile[order]
        if s.size > 1 and (s[1:] < np.maximum.accumulate(e)[:-1]).any():
            # overlapping runs: resolve element by element, the later run winning
            flat = self.element_tiles(slice(self._bases[k], self._bases[k] + n))
            for a, b, u in zip(
                start.tolist(), (start + length).tolist(), tile.tolist(), strict=True
            ):
                flat[a:b] = u
            cuts = np.concatenate(([0], np.flatnonzero(flat[1:] != flat[:-1]) + 1))
            self._set(k, cuts, flat[cuts])
            return
        old_s, old_t = self._starts[k], self._tiles[k]
        # the gaps between new runs keep their old tiles
        gap_s = np.concatenate(([0], e))
        gap_e = np.concatenate((s, [n]))
        g = gap_e > gap_s
        gap_s, gap_e = gap_s[g], gap_e[g]
        if gap_s.size:
            lo = np.searchsorted(old_s, gap_s, side="right") - 1
            hi = np.searchsorted(old_s, gap_e - 1, side="right") - 1
            count = hi - lo + 1
            src = np.repeat(np.arange(gap_s.size), count)
            idx = lo[src] + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
            piece_s = np.maximum(gap_s[src], old_s[idx])
            piece_t = old_t[idx]
        else:
            piece_s, piece_t = _EMPTY64, _EMPTY32
        all_s = np.concatenate((s, piece_s))
        all_t = np.concatenate((t, piece_t))
        order = np.argsort(all_s, kind="stable")
        all_s, all_t = all_s[order], all_t[order]
        keep = np.r_[True, all_t[1:] != all_t[:-1]]
        self._set(k, all_s[keep], all_t[keep])

    def _set(self, k: int, starts: np.ndarray, tiles: np.ndarray) -> None:
        self._starts[k] = starts.astype(index_dtype(self._var_size(k)), copy=False)
        self._tiles[k] = tiles.astype(np.int32, copy=False)

    # -- reading ----------------------------------------------------------------------
    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """(first address, tile) of every interval, in address order; intervals never
        cross a variable boundary."""
        n = len(self._starts)
        if self._joined is None or self._changed_from < n:
            k = self._changed_from if self._joined is not None else 0
            counts = np.array([s.size for s in self._starts[k:]], dtype=np.int64)
            offsets = np.empty(n + 1, dtype=np.int64)
            offsets[: k + 1] = self._joined_offsets[: k + 1]
            np.cumsum(counts, out=offsets[k + 1 :])
            kept = int(offsets[k])
            offsets[k + 1 :] += kept
            total = int(offsets[-1])
            joined_vars = self._joined_offsets.size - 1
            # new variables only: write after the joined ones (views handed out before
            # still read what they read); else, or when full, into a new buffer
            starts_buf, tiles_buf = self._joined_buffers
            if k < joined_vars or starts_buf.size < total:
                room = max(total, 2 * starts_buf.size) if k >= joined_vars else total
                grown_s, grown_t = np.empty(room, np.int64), np.empty(room, np.int32)
                grown_s[:kept], grown_t[:kept] = starts_buf[:kept], tiles_buf[:kept]
                starts_buf, tiles_buf = grown_s, grown_t
            if k < n:
                np.concatenate(
                    [
                        np.add(s, b, dtype=np.int64)
                        for s, b in zip(self._starts[k:], self._bases[k:], strict=True)
                    ],
                    out=starts_buf[kept:total],
                    casting="unsafe",
                )
                np.concatenate(self._tiles[k:], out=tiles_buf[kept:total], casting="unsafe")
            self._joined_buffers = (starts_buf, tiles_buf)
            self._joined = (starts_buf[:total], tiles_buf[:total])
            self._joined_offsets, self._changed_from = offsets, n
        return self._joined

    def runs_variables(self) -> np.ndarray:
        """The variable (index in the pool) of each of ``runs``' intervals."""
        self.runs()
        counts = np.diff(self._joined_offsets)
        return np.repeat(np.arange(counts.size, dtype=np.int64), counts)

    def forget_joined(self) -> None:
        """Let the joined intervals go (``runs`` makes them again when asked): they answer
        tile look-ups while a graph is built and compiled, and are as big as the mapping."""
        self._joined = None
        self._joined_offsets = np.zeros(1, dtype=np.int64)
        self._joined_buffers = (_EMPTY64, _EMPTY32)
        self._changed_from = 0

    @property
    def joined_bytes(self) -> int:
        """Bytes the joined intervals hold (0 once forgotten), spare room included."""
        starts, tiles = self._joined_buffers
        return int(starts.nbytes + tiles.nbytes)

    def variable_intervals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(variable index in the pool, start within it, elements, tile) of every interval,
        read from the variables' own intervals (no joined copy): the variable int32, start
        and elements int32 unless a variable has 2**31 elements or more, tile int32."""
        n = len(self._starts)
        counts = np.fromiter((s.size for s in self._starts), dtype=np.int64, count=n)
        sizes = np.diff(np.append(self._bases_np(), self.size))
        wide = index_dtype(int(sizes.max()) if n else 0)
        if n == 0 or counts.sum() == 0:
            empty = np.zeros(0, dtype=wide)
            return np.zeros(0, dtype=np.int32), empty, empty.copy(), np.zeros(0, dtype=np.int32)
        var = np.repeat(np.arange(n, dtype=np.int32), counts)
        start, tile = self._pack(counts, wide)
        # an interval ends where the next one of its variable starts, the last at its end
        elements = np.empty_like(start)
        np.subtract(start[1:], start[:-1], out=elements[:-1])
        last = np.cumsum(counts)[counts > 0] - 1
        elements[last] = sizes[counts > 0] - start[last]
        return var, start, elements, tile

    def _pack(
        self, counts: np.ndarray, wide: type[np.signedinteger]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The variables' starts and tiles joined (read-only), each variable's intervals
        becoming views of them: the mapping is then held once, however often it is read."""
        if self._packed is None:
            start = np.concatenate(self._starts, dtype=wide, casting="same_kind")
            tile = np.concatenate(self._tiles)
            start.flags.writeable = tile.flags.writeable = False
            bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
            for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
                if hi > lo:
                    self._starts[k], self._tiles[k] = start[lo:hi], tile[lo:hi]
            self._packed = (start, tile)
        return self._packed

    def intervals(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(first address, elements, tile) of the intervals of ``[begin, end)``, cut at its
        ends: the mapping of a range without one tile per element."""
        if end <= begin:
            return _EMPTY64, _EMPTY64, _EMPTY32
        starts, tiles = self._intervals_holding(begin, end)
        lo = np.searchsorted(starts, begin, side="right") - 1
        hi = np.searchsorted(starts, end - 1, side="right") - 1
        s = np.maximum(starts[lo : hi + 1], begin)
        e = np.minimum(np.append(starts[lo + 1 : hi + 1], end), end)
        return s, e - s, tiles[lo : hi + 1]

    def element_tiles(self, index: np.ndarray | slice) -> np.ndarray:
        """The tile of each element at ``index`` (addresses, or a slice of the pool)."""
        if isinstance(index, slice):
            begin, end, _ = index.indices(self.size)
            _, length, tiles = self.intervals(begin, end)
            return np.repeat(tiles, length)
        addr = np.asarray(index, dtype=np.int64)
        if addr.size == 0:
            return np.zeros(addr.shape, dtype=np.int32)
        # a view of one variable is looked up in that variable's own intervals: joining
        # every variable's (``runs``) after each op maps its output cost a model's build
        # a copy of the whole mapping per op
        starts, tiles = self._intervals_holding(int(addr.min()), int(addr.max()) + 1)
        return tiles[search_many(starts, addr) - 1]

    def _intervals_holding(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """(first address, tile) of intervals covering [begin, end): one variable's own
        when the range lies in it, so that reading a new variable's mapping does not join
        every variable's intervals again (quadratic over a model's ops)."""
        bases = self._bases_np()
        k = int(np.searchsorted(bases, begin, side="right")) - 1
        if end <= bases[k] + self._var_size(k):
            return np.add(self._starts[k], bases[k], dtype=np.int64), self._tiles[k]
        return self.runs()
