"""Exchange planning: which bytes move between tiles for a copy (and, in ``vertex_exchange``,
before and after a compute set), split into on-IPU traffic (DoExchange) and IPU-Link
traffic (GlobalExchange).

A tile receives each remote element it needs once per exchange, however many of its
vertices read it; a vertex output held on another tile is sent there after the compute.
``plan_exchange`` takes runs already cut where the tile mapping changes (``split_by_tile``)
and unions them per tile pair; it is also the plain reference the faster compute-set
planning is tested against.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.target import Target


@dataclass(frozen=True)
class Transfer:
    """Runs of elements of one pool moving: ``[start, start + length)`` of addresses from
    ``src_tile`` to ``dst_tile`` (one row per run)."""

    start: np.ndarray  # int64 first address
    length: np.ndarray  # int64 elements
    src_tile: np.ndarray
    dst_tile: np.ndarray
    elem_size: int
    pool_id: int  # keeps addresses of different element types apart


@dataclass(frozen=True)
class ExchangeTraffic:
    """Bytes each tile receives and sends in one exchange step (sparse over tiles)."""

    tiles: np.ndarray  # int32 tiles that send or receive
    bytes_in: np.ndarray  # int64
    bytes_out: np.ndarray  # int64

    @property
    def empty(self) -> bool:
        return self.tiles.size == 0

    @property
    def total_bytes(self) -> int:
        return int(self.bytes_in.sum())


class RearrangedTraffic(ExchangeTraffic):
    """Streamed data being put where its tensor lives (``stream_rearrangement``): it moves
    at ``REARRANGE_EXCHANGE_EFFICIENCY`` of the exchange's bytes per cycle."""


@dataclass(frozen=True)
class ExchangePlan:
    on_ipu: ExchangeTraffic
    cross_ipu: ExchangeTraffic


_EMPTY = ExchangeTraffic(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64))


_CHUNK_ROWS = 1 << 20  # remote runs unioned at a time: bounds the union's working arrays


def plan_exchange(target: Target, transfers: Iterable[Transfer]) -> ExchangePlan:
    """Sum the remote traffic of ``transfers``; local elements (same tile) cost nothing.

    A tile receives an element from a tile once, however many runs name it: per
    (destination, source) pair the bytes are those of the union of its runs. The unions
    are taken over a range of destination tiles at a time (a pair lies in one range), so
    the millions of one-element runs of a broadcast operand never sort all at once.
    """
    num_tiles = target.num_tiles
    by_pool: dict[int, list[Transfer]] = {}
    sizes: dict[int, int] = {}
    rows_to: dict[int, np.ndarray] = {}  # remote runs per destination tile, per pool
    for t in transfers:
        remote = (t.src_tile != t.dst_tile) & (t.length > 0)
        if not remote.any():
            continue
        by_pool.setdefault(t.pool_id, []).append(t)
        sizes[t.pool_id] = t.elem_size
        counts = np.bincount(t.dst_tile[remote], minlength=num_tiles)
        rows_to[t.pool_id] = rows_to.get(t.pool_id, 0) + counts
    on_in = np.zeros(num_tiles, np.int64)
    on_out = np.zeros(num_tiles, np.int64)
    cross_in = np.zeros(num_tiles, np.int64)
    cross_out = np.zeros(num_tiles, np.int64)
    for pool_id, group in by_pool.items():
        for lo, hi in _tile_ranges(rows_to[pool_id], _CHUNK_ROWS):
            pair, covered = _union_to_tiles(group, lo, hi, num_tiles)
            src = pair % num_tiles
            dst = pair // num_tiles
            crossing = (src // target.tiles_per_ipu) != (dst // target.tiles_per_ipu)
            weight = covered * sizes[pool_id]
            for mask, bytes_in, bytes_out in (
                (~crossing, on_in, on_out),
                (crossing, cross_in, cross_out),
            ):
                if mask.any():
                    bytes_in += np.bincount(
                        dst[mask], weights=weight[mask], minlength=num_tiles
                    ).astype(np.int64)
                    bytes_out += np.bincount(
                        src[mask], weights=weight[mask], minlength=num_tiles
                    ).astype(np.int64)
    return ExchangePlan(_traffic(on_in, on_out), _traffic(cross_in, cross_out))


def _tile_ranges(rows: np.ndarray, most: int) -> list[tuple[int, int]]:
    """Consecutive destination tile ranges ``[lo, hi)`` holding about ``most`` rows each
    (one tile's rows are never split)."""
    ends = np.cumsum(rows)
    ranges, lo, done = [], 0, 0
    while lo < rows.size:
        hi = max(int(np.searchsorted(ends, done + most, side="right")), lo + 1)
        ranges.append((lo, hi))
        done, lo = int(ends[hi - 1]), hi
    return ranges


def _union_to_tiles(
    group: list[Transfer], lo: int, hi: int, num_tiles: int
) -> tuple[np.ndarray, np.ndarray]:
    """(dst * num_tiles + src, elements in the union of its runs) of the remote runs of
    ``group`` whose destination tile is in ``[lo, hi)``."""
    pairs, starts, ends = [], [], []
    for t in group:
        keep = (t.dst_tile >= lo) & (t.dst_tile < hi) & (t.src_tile != t.dst_tile)
        keep &= t.length > 0
        if not keep.any():
            continue
        start = t.start[keep].astype(np.int64)
        pairs.append(t.dst_tile[keep].astype(np.int64) * num_tiles + t.src_tile[keep])
        starts.append(start)
        ends.append(start + t.length[keep])
    if not pairs:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    return union_lengths(np.concatenate(pairs), np.concatenate(starts), np.concatenate(ends))


def union_lengths(
    key: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each distinct ``key``, the number of addresses in the union of its intervals
    ``[start, end)``: (keys sorted, lengths)."""
    order = _key_then_start_order(key, start)
    key, start, end = key[order], start[order], end[order]
    first = np.r_[True, key[1:] != key[:-1]]
    # the furthest end reached so far within the key, carried by one running maximum:
    # keys are shifted apart so that a new key never sees the previous key's ends
    span = int(end.max()) + 1
    rank = np.cumsum(first) - 1
    reach = np.maximum.accumulate(rank * span + end) - rank * span
    before = np.r_[0, reach[:-1]]
    before[first] = 0
    covered = np.maximum(0, end - np.maximum(start, before))
    starts = np.flatnonzero(first)
    return key[starts], np.add.reduceat(covered, starts)


def _key_then_start_order(key: np.ndarray, start: np.ndarray) -> np.ndarray:
    """``np.lexsort((start, key))``: one stable argsort of ``key * span + start`` when that
    fits in int64 (a sort of one key, not two passes), else lexsort itself."""
    if key.size == 0:
        return np.zeros(0, dtype=np.intp)
    low, high = int(start.min()), int(start.max())
    span = high - low + 1
    if int(key.min()) < 0 or (int(key.max()) + 1) * span >= 2**62:
        return np.lexsort((start, key))
    return np.argsort(key.astype(np.int64) * span + (start - low), kind="stable")


def _traffic(bytes_in: np.ndarray, bytes_out: np.ndarray) -> ExchangeTraffic:
    tiles = np.flatnonzero((bytes_in > 0) | (bytes_out > 0)).astype(np.int32)
    if tiles.size == 0:
        return _EMPTY
    return ExchangeTraffic(tiles, bytes_in[tiles], bytes_out[tiles])


def stream_rearrangement(target: Target, tiles: np.ndarray, elem_size: int) -> ExchangePlan:
    """The exchange that puts streamed data where its tensor lives.

    ``tiles`` is the tile of each element of the destination, in stream order. The host
    writes the stream in order, an even block to each of the tiles the tensor uses (in
    tile order); an element whose block is on another tile moves there afterwards. A
    tensor mapped linearly in stream order lands in place and needs no exchange.
    """
    n = tiles.size
    if n == 0:
        return ExchangePlan(_EMPTY, _EMPTY)
    dst = tiles.astype(np.int64)
    used = np.flatnonzero(np.bincount(dst, minlength=target.num_tiles))
    src = used[np.arange(n, dtype=np.int64) * used.size // n]
    moving = src != dst
    if not moving.any():
        return ExchangePlan(_EMPTY, _EMPTY)
    src, dst = src[moving], dst[moving]
    crossing = (src // target.tiles_per_ipu) != (dst // target.tiles_per_ipu)
    parts = []
    for mask in (~crossing, crossing):
        bytes_in = np.bincount(dst[mask], minlength=target.num_tiles) * elem_size
        bytes_out = np.bincount(src[mask], minlength=target.num_tiles) * elem_size
        parts.append(_traffic(bytes_in.astype(np.int64), bytes_out.astype(np.int64)))
    on_ipu = parts[0]
    if not on_ipu.empty:
        on_ipu = RearrangedTraffic(on_ipu.tiles, on_ipu.bytes_in, on_ipu.bytes_out)
    return ExchangePlan(on_ipu, parts[1])
